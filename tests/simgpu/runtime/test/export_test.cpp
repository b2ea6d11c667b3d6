// The shape of libcudart.so.13 as the dynamic linker sees it: SONAME, no
// link-time dependency on the driver, one version node, and the same export
// list as the real CUDA 13 runtime.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

std::string run(const std::string& command) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) output += buffer.data();
  pclose(pipe);
  return output;
}

struct DynamicSymbol {
  std::string name;
  std::string version;  // after "@@" or "@", empty if unversioned
  bool defined;
};

// Parses `readelf --dyn-syms -W`: Num Value Size Type Bind Vis Ndx Name.
std::vector<DynamicSymbol> dynamic_symbols(const std::string& library) {
  std::vector<DynamicSymbol> symbols;
  std::istringstream lines(run(environment("READELF") + " --dyn-syms -W " + library));
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string num, value, size, type, bind, visibility, index, name;
    if (!(fields >> num >> value >> size >> type >> bind >> visibility >> index >> name)) continue;
    if (num.empty() || num.back() != ':' || !std::isdigit(static_cast<unsigned char>(num[0])))
      continue;
    DynamicSymbol symbol;
    symbol.defined = index != "UND";
    std::size_t at = name.find('@');
    symbol.name = name.substr(0, at);
    if (at != std::string::npos) symbol.version = name.substr(name.find_first_not_of('@', at));
    symbols.push_back(symbol);
  }
  return symbols;
}

std::set<std::string> defined_function_names(const std::string& library) {
  std::set<std::string> names;
  for (const DynamicSymbol& symbol : dynamic_symbols(library)) {
    if (symbol.defined && !symbol.name.empty() && symbol.name != "libcudart.so.13") {
      names.insert(symbol.name);
    }
  }
  return names;
}

class RuntimeLibraryShape : public ::testing::Test {
 protected:
  void SetUp() override {
    library_ = environment("SIMGPU_CUDART");
    ASSERT_FALSE(library_.empty()) << "SIMGPU_CUDART must name the built libcudart.so.13";
    ASSERT_FALSE(environment("READELF").empty());
  }
  std::string library_;
};

TEST_F(RuntimeLibraryShape, SonameIsLibcudartSo13) {
  std::string dynamic = run(environment("READELF") + " -d " + library_);
  EXPECT_NE(dynamic.find("Library soname: [libcudart.so.13]"), std::string::npos) << dynamic;
}

TEST_F(RuntimeLibraryShape, DoesNotNeedTheDriverAtLinkTime) {
  std::istringstream lines(run(environment("READELF") + " -d " + library_));
  std::string line;
  int needed = 0;
  while (std::getline(lines, line)) {
    if (line.find("(NEEDED)") == std::string::npos) continue;
    ++needed;
    EXPECT_EQ(line.find("[libcuda."), std::string::npos) << line;
  }
  EXPECT_GT(needed, 0) << "readelf -d listed no NEEDED entries at all";
}

TEST_F(RuntimeLibraryShape, ImportsNoDriverFunction) {
  for (const DynamicSymbol& symbol : dynamic_symbols(library_)) {
    if (symbol.defined) continue;
    EXPECT_FALSE(symbol.name.rfind("cu", 0) == 0 && symbol.name.rfind("cuda", 0) != 0)
        << "undefined driver symbol " << symbol.name;
  }
}

TEST_F(RuntimeLibraryShape, EveryExportCarriesVersionLibcudartSo13) {
  int exported = 0;
  for (const DynamicSymbol& symbol : dynamic_symbols(library_)) {
    if (!symbol.defined || symbol.name == "libcudart.so.13") continue;
    ++exported;
    EXPECT_EQ(symbol.version, "libcudart.so.13") << symbol.name;
    EXPECT_TRUE(symbol.name.rfind("cuda", 0) == 0 || symbol.name.rfind("__cuda", 0) == 0)
        << "export outside the CUDA runtime namespace: " << symbol.name;
  }
  EXPECT_GT(exported, 100);
}

TEST_F(RuntimeLibraryShape, DlvsymFindsVersionedEntryPoints) {
  void* handle = dlopen(library_.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  for (const char* name : {"cudaMalloc", "cudaMemcpyAsync_ptsz", "__cudaRegisterFatBinary",
                           "__cudaLaunchKernel_ptsz", "cudaGetDriverEntryPointByVersion"}) {
    EXPECT_NE(dlvsym(handle, name, "libcudart.so.13"), nullptr) << name;
    EXPECT_EQ(dlvsym(handle, name, "libcudart.so.12"), nullptr) << name;
  }
  dlclose(handle);
}

TEST_F(RuntimeLibraryShape, ExportsExactlyTheRealRuntimesNames) {
  std::string real = environment("REAL_CUDART");
  FILE* probe = real.empty() ? nullptr : std::fopen(real.c_str(), "rb");
  if (probe == nullptr) GTEST_SKIP() << "no real libcudart.so.13 to compare with";
  std::fclose(probe);
  std::set<std::string> ours = defined_function_names(library_);
  std::set<std::string> theirs = defined_function_names(real);
  ASSERT_GT(theirs.size(), 300u);
  for (const std::string& name : theirs) EXPECT_TRUE(ours.count(name)) << "missing export " << name;
  for (const std::string& name : ours) EXPECT_TRUE(theirs.count(name)) << "extra export " << name;
}

}  // namespace
