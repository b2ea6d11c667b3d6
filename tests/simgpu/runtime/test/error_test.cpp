// Error codes: names and strings for every enumerator, last-error semantics,
// and driver failures surfacing as the runtime errors programs test for.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

// Every `cudaErrorX = N` in the toolkit's driver_types.h, read independently
// of the runtime's own table.
std::vector<std::pair<std::string, int>> error_enumerators_from_header() {
  const char* include_dir = std::getenv("CUDA_INCLUDE_DIR");
  std::ifstream header(std::string(include_dir != nullptr ? include_dir : "") + "/driver_types.h");
  std::string text((std::istreambuf_iterator<char>(header)), std::istreambuf_iterator<char>());
  std::vector<std::pair<std::string, int>> enumerators;
  std::regex enumerator(R"((cudaError\w+)\s*=\s*(\d+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), enumerator);
       it != std::sregex_iterator(); ++it) {
    enumerators.emplace_back((*it)[1].str(), std::stoi((*it)[2].str()));
  }
  return enumerators;
}

TEST(RuntimeErrors, EveryEnumeratorHasItsOwnNameAndADescription) {
  auto enumerators = error_enumerators_from_header();
  ASSERT_GT(enumerators.size(), 100u) << "could not read driver_types.h";
  for (const auto& [name, value] : enumerators) {
    auto error = static_cast<cudaError_t>(value);
    EXPECT_EQ(std::string(cudaGetErrorName(error)), name) << value;
    EXPECT_STRNE(cudaGetErrorString(error), "unrecognized error code") << name;
    EXPECT_STRNE(cudaGetErrorString(error), "") << name;
  }
  EXPECT_STREQ(cudaGetErrorName(cudaSuccess), "cudaSuccess");
  EXPECT_STREQ(cudaGetErrorString(cudaSuccess), "no error");
}

TEST(RuntimeErrors, WellKnownMessagesMatchTheRealRuntime) {
  EXPECT_STREQ(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorInvalidDevice), "invalid device ordinal");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorNotReady), "device not ready");
}

TEST(RuntimeErrors, UnknownCodeIsUnrecognized) {
  EXPECT_STREQ(cudaGetErrorName(static_cast<cudaError_t>(12345)), "unrecognized error code");
  EXPECT_STREQ(cudaGetErrorString(static_cast<cudaError_t>(12345)), "unrecognized error code");
}

TEST(RuntimeErrors, GetLastErrorReturnsThenClearsPeekKeeps) {
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaSetDevice(1 << 20), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(RuntimeErrors, SuccessfulCallsDoNotClearTheLastError) {
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  void* pointer = nullptr;
  EXPECT_EQ(cudaMalloc(&pointer, static_cast<size_t>(1) << 60), cudaErrorMemoryAllocation);
  ASSERT_EQ(cudaMalloc(&pointer, 256), cudaSuccess);
  ASSERT_EQ(cudaFree(pointer), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
}

TEST(RuntimeErrors, LastErrorIsPerThread) {
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaSetDevice(-1), cudaErrorInvalidDevice);
  cudaError_t seen_by_other_thread = cudaErrorUnknown;
  std::thread([&] { seen_by_other_thread = cudaGetLastError(); }).join();
  EXPECT_EQ(seen_by_other_thread, cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDevice);
}

TEST(RuntimeErrors, AllocationBeyondDeviceMemoryIsMemoryAllocation) {
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  void* pointer = nullptr;
  EXPECT_EQ(cudaMalloc(&pointer, total_bytes + 1), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
}

TEST(RuntimeErrors, BadCopyDirectionIsInvalidMemcpyDirection) {
  char host[16] = {};
  void* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, sizeof(host)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(device, host, sizeof(host), static_cast<cudaMemcpyKind>(7)),
            cudaErrorInvalidMemcpyDirection);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidMemcpyDirection);
  EXPECT_EQ(cudaFree(device), cudaSuccess);
}

TEST(RuntimeErrors, FreeingAnUnknownPointerIsInvalidValue) {
  int on_stack = 0;
  EXPECT_EQ(cudaFree(&on_stack), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
}

TEST(RuntimeErrors, LaunchingAnUnregisteredFunctionIsInvalidDeviceFunction) {
  int not_a_kernel = 0;
  EXPECT_EQ(cudaLaunchKernel(&not_a_kernel, dim3(1), dim3(1), nullptr, 0, nullptr),
            cudaErrorInvalidDeviceFunction);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDeviceFunction);
}

TEST(RuntimeErrors, UnimplementedExportsReturnNotSupported) {
  EXPECT_EQ(cudaGraphDestroyNode(nullptr), cudaErrorNotSupported);
  EXPECT_EQ(cudaGetLastError(), cudaErrorNotSupported);
  const void* table = reinterpret_cast<const void*>(1);
  cudaUUID_t id{};
  EXPECT_EQ(cudaGetExportTable(&table, &id), cudaErrorNotSupported);
  EXPECT_EQ(table, nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaErrorNotSupported);
}

}  // namespace
