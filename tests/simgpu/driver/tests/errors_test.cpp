// cuGetErrorName and cuGetErrorString know every CUresult of cuda.h. The list of
// enumerators is read from the real header here, independently of the
// generator that builds the driver's table.
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "driver_test_support.h"

namespace {

std::vector<std::pair<std::string, int>> enumerators_of_cuda_h() {
  std::ifstream header(std::string(CUDA_INCLUDE_DIR) + "/cuda.h");
  std::string text((std::istreambuf_iterator<char>(header)), std::istreambuf_iterator<char>());
  const size_t begin = text.find("typedef enum cudaError_enum {");
  const size_t end = text.find("} CUresult;", begin);
  std::vector<std::pair<std::string, int>> found;
  if (begin == std::string::npos || end == std::string::npos) return found;
  const std::string body = text.substr(begin, end - begin);
  const std::regex enumerator(R"((CUDA_(?:SUCCESS|ERROR_\w+))\s*=\s*(\d+))");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), enumerator); it != std::sregex_iterator(); ++it) {
    found.emplace_back((*it)[1].str(), std::stoi((*it)[2].str()));
  }
  return found;
}

TEST(Errors, EveryResultInCudaHHasItsNameAndADescription) {
  const auto enumerators = enumerators_of_cuda_h();
  ASSERT_GT(enumerators.size(), 90u);
  for (const auto& [name, value] : enumerators) {
    const char* reported_name = nullptr;
    const char* text = nullptr;
    ASSERT_EQ(CUDA_SUCCESS, cuGetErrorName(CUresult(value), &reported_name)) << name;
    EXPECT_STREQ(name.c_str(), reported_name);
    ASSERT_EQ(CUDA_SUCCESS, cuGetErrorString(CUresult(value), &text)) << name;
    ASSERT_NE(nullptr, text);
    EXPECT_GT(std::string(text).size(), 5u) << name;
  }
}

TEST(Errors, CommonMessagesReadLikeTheRealDriver) {
  const char* text = nullptr;
  ASSERT_EQ(CUDA_SUCCESS, cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &text));
  EXPECT_STREQ("out of memory", text);
  ASSERT_EQ(CUDA_SUCCESS, cuGetErrorString(CUDA_ERROR_INVALID_VALUE, &text));
  EXPECT_STREQ("invalid argument", text);
}

TEST(Errors, UnknownValuesAreRejected) {
  const char* text = "unchanged";
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, cuGetErrorName(CUresult(123456), &text));
  EXPECT_EQ(nullptr, text);
  text = "unchanged";
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, cuGetErrorString(CUresult(123456), &text));
  EXPECT_EQ(nullptr, text);
  EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, cuGetErrorName(CUDA_SUCCESS, nullptr));
}

}  // namespace
