// The CUDA hook table against the CUDA 13 toolkit, which is the truth the
// table is generated from (preload/cuda/gen/gen_cuda_hooks.py):
//  - every symbol the toolkit's libcuda stub exports has a row, and every
//    driver row (symbol, api_name, min_version, per_thread) is an ABI
//    variant cudaTypedefs.h declares (PFN_<api>_v<version>[_ptsz|_ptds]);
//  - every symbol the real libcudart.so.13 exports has a row (read with nm,
//    never loaded), but the three whose signatures no header gives;
//  - libproflaunch.so exports exactly the table's CUDA symbols;
//  - PROFLAUNCH_COUNTED changes which APIs are counted.
// That every row's prototype matches the header is checked when the
// wrappers are compiled: each is defined against the header's declaration
// of its symbol, and each driver wrapper's type against its PFN typedef.
// The table comes from the hook objects themselves (install_hooks).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "preload/cuda/hook.h"
#include "preload/cuda/rows/row_support.h"
#include "preload/hook_sets.h"
#include "preload/intercept/hook_registry.h"
#include "tests/unit/cuda_hooks/elf_symbols.h"
#include "tests/unit/preload/support/process_runner.h"

namespace proflaunch::testing {
namespace {

// A PFN typedef: the API name, the version it appeared in, and its
// per-thread-default-stream suffix ("", "_ptsz" or "_ptds").
struct Variant {
  std::string api;
  int version;
  std::string suffix;
  bool operator<(const Variant& o) const {
    return std::tie(api, version, suffix) < std::tie(o.api, o.version, o.suffix);
  }
};

std::set<Variant> pfn_variants(const std::string& include_dir) {
  std::stringstream text;
  for (const char* name : {"/cudaTypedefs.h", "/cudaProfilerTypedefs.h"}) {
    std::ifstream in(include_dir + name);
    text << in.rdbuf();
  }
  const std::string header = text.str();
  std::set<Variant> variants;
  // typedef CUresult (CUDAAPI *PFN_cuMemcpyHtoD_v7000_ptds)(...);
  const std::regex typedef_line(R"(\*\s*PFN_(cu\w+?)_v(\d+)(_ptsz|_ptds)?\s*\))");
  for (auto it = std::sregex_iterator(header.begin(), header.end(), typedef_line);
       it != std::sregex_iterator(); ++it)
    variants.insert({(*it)[1], std::stoi((*it)[2]), (*it)[3]});
  return variants;
}

std::string cuda_home() { return required_env("CUDA_HOME_DIR"); }

// The libraries libproflaunch.so hooks, as it installs them.
bool install(const Config& config) {
  size_t count = 0;
  const hooks::HookLibrary* libraries = hooked_libraries(&count);
  return hooks::install_hooks(libraries, count, false, config);
}

class HookTable : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Config config;
    installed_ = install(config);
  }
  static bool installed_;
};
bool HookTable::installed_ = false;

std::string suffix_of(const std::string& symbol) {
  for (const char* suffix : {"_ptsz", "_ptds"})
    if (symbol.size() > 5 && symbol.compare(symbol.size() - 5, 5, suffix) == 0) return suffix;
  return "";
}

std::set<std::string> table_symbols(const char* library) {
  std::set<std::string> symbols;
  for (const intercept::HookEntry& row : hooks::hook_table())
    if (std::string(row.library_prefix) == library) symbols.insert(row.symbol);
  return symbols;
}

TEST_F(HookTable, IsConsistent) {
  ASSERT_TRUE(installed_) << "duplicate symbols in the hook table";
  EXPECT_GT(hooks::hook_table().size(), 1000u);
}

TEST_F(HookTable, EveryDriverExportHasARowAndEveryRowIsAHeaderVariant) {
  ASSERT_TRUE(installed_);
  const std::set<Variant> variants = pfn_variants(cuda_home() + "/include");
  ASSERT_GT(variants.size(), 600u) << "cudaTypedefs.h was not parsed";
  std::string error;
  const std::set<std::string> driver_exports =
      defined_dynamic_symbols(required_env("NM"), cuda_home() + "/lib64/stubs/libcuda.so", &error);
  ASSERT_EQ(error, "");
  ASSERT_GT(driver_exports.size(), 600u);
  const std::set<std::string> rows = table_symbols(cuda::kDriverLibrary);
  for (const std::string& symbol : driver_exports) EXPECT_TRUE(rows.count(symbol)) << symbol << " has no row";
  for (const intercept::HookEntry& row : hooks::hook_table()) {
    if (std::string(row.library_prefix) != cuda::kDriverLibrary) continue;
    SCOPED_TRACE(row.symbol);
    ASSERT_NE(row.api_name, nullptr);
    const std::string suffix = suffix_of(row.symbol);
    EXPECT_EQ(row.per_thread, !suffix.empty());
    EXPECT_TRUE(variants.count({row.api_name, row.min_version, suffix}))
        << "no PFN_" << row.api_name << "_v" << row.min_version << suffix << " in cudaTypedefs.h";
    EXPECT_TRUE(driver_exports.count(row.symbol)) << "the driver does not export " << row.symbol;
  }
}

// Exported by libcudart.so.13 with signatures no header of the toolkit
// declares: the shim cannot wrap them (runtime_private_abi.h), so calls to
// them reach the runtime directly and are not recorded.
const std::set<std::string> kRuntimeExportsWithoutASignature = {
    "__cudaGetProcAddress", "__cudaRegisterHostVar", "__cudaRegisterUnifiedTable"};

TEST_F(HookTable, EveryRuntimeExportHasARowButThoseWithoutASignature) {
  ASSERT_TRUE(installed_);
  std::string error;
  std::set<std::string> runtime_exports =
      defined_dynamic_symbols(required_env("NM"), cuda_home() + "/lib64/libcudart.so.13", &error);
  ASSERT_EQ(error, "");
  runtime_exports.erase("libcudart.so.13");  // the version node, not a function
  ASSERT_GT(runtime_exports.size(), 400u);
  const std::set<std::string> rows = table_symbols(cuda::kRuntimeLibrary);
  for (const std::string& symbol : runtime_exports) {
    if (kRuntimeExportsWithoutASignature.count(symbol)) {
      EXPECT_FALSE(rows.count(symbol)) << symbol << " has a row now: remove it from the list";
      continue;
    }
    EXPECT_TRUE(rows.count(symbol)) << symbol << " has no row";
  }
  for (const intercept::HookEntry& row : hooks::hook_table()) {
    if (std::string(row.library_prefix) != cuda::kRuntimeLibrary) continue;
    SCOPED_TRACE(row.symbol);
    EXPECT_EQ(row.api_name, nullptr) << "runtime functions are not reached through cuGetProcAddress";
    EXPECT_EQ(row.per_thread, !suffix_of(row.symbol).empty());
    EXPECT_TRUE(runtime_exports.count(row.symbol)) << "libcudart.so.13 does not export " << row.symbol;
  }
}

TEST_F(HookTable, TheShimExportsExactlyTheTablesCudaSymbols) {
  ASSERT_TRUE(installed_);
  std::string error;
  const std::set<std::string> exports =
      defined_dynamic_symbols(required_env("NM"), required_env("LIBPROFLAUNCH"), &error);
  ASSERT_EQ(error, "");
  // Every cu*, __cuda* and cupti* export has a row (the cupti* rows: the
  // CUPTI coexistence entry points, preload/cuda/cupti), and every row of
  // those libraries is exported.
  std::set<std::string> exported_cuda;
  for (const std::string& name : exports)
    if (name.rfind("cu", 0) == 0 || name.rfind("__cuda", 0) == 0) exported_cuda.insert(name);
  std::set<std::string> table;
  std::set<std::string> exported_hip, hip_table;
  for (const std::string& name : exports)
    if (name.rfind("hip", 0) == 0 || name.rfind("__hip", 0) == 0 ||
        (name.rfind("_Z", 0) == 0 && name.find("hip") != std::string::npos))
      exported_hip.insert(name);
  for (const intercept::HookEntry& row : hooks::hook_table()) {
    const std::string library = row.library_prefix;
    if (library == "libamdhip64.so") hip_table.insert(row.symbol);
    else if (library != "libnccl.so") table.insert(row.symbol);
  }
  EXPECT_EQ(exported_cuda, table);
  // The HIP hooks likewise (preload/hip; none when built without HIP).
  EXPECT_EQ(exported_hip, hip_table);
  for (const char* cupti : {"cuptiSubscribe", "cuptiSubscribe_v2", "cuptiActivityRegisterCallbacks",
                            "cuptiActivityEnable", "cuptiActivityEnableContext",
                            "cuptiActivityRegisterTimestampCallback", "cuptiPmSamplingEnable",
                            "cuptiRangeProfilerEnable", "cuptiProfilerBeginSession"})
    EXPECT_TRUE(table.count(cupti)) << cupti << ": a program that dlsyms it must get the shim's";
}

// Every API has one id and one name; variants of one API share it.
TEST_F(HookTable, EveryApiHasOneIdAndOneName) {
  ASSERT_TRUE(installed_);
  std::map<uint16_t, std::string> names;
  std::set<std::string> seen;
  for (size_t i = 0; i < hooks::known_api_count(); ++i) {
    const hooks::KnownApi api = hooks::known_api(i);
    ASSERT_NE(api.name, nullptr);
    EXPECT_TRUE(names.emplace(api.api, api.name).second) << "id " << api.api << " twice";
    EXPECT_TRUE(seen.insert(api.name).second) << api.name << " twice";
    EXPECT_LT(api.api, kCountedApiSlots);
  }
  EXPECT_TRUE(seen.count("cuMemcpyHtoD"));
  EXPECT_FALSE(seen.count("cuMemcpyHtoD_v2")) << "an ABI variant is not an API of its own";
  EXPECT_TRUE(seen.count("cudaLaunchKernel"));
  EXPECT_FALSE(seen.count("__cudaLaunchKernel")) << "the <<<>>> stub's launch is recorded as cudaLaunchKernel";
}

uint16_t api_id(const char* name) {
  for (size_t i = 0; i < hooks::known_api_count(); ++i)
    if (std::string(hooks::known_api(i).name) == name) return hooks::known_api(i).api;
  ADD_FAILURE() << "no API " << name;
  return 0;
}

TEST_F(HookTable, CountedCallsFollowTheTableAndProflaunchCounted) {
  ASSERT_TRUE(installed_);
  EXPECT_TRUE(hooks::counted_api(api_id("cuCtxGetCurrent")));
  EXPECT_TRUE(hooks::counted_api(api_id("cudaGetLastError")));
  EXPECT_FALSE(hooks::counted_api(api_id("cuLaunchKernel")));
  EXPECT_FALSE(hooks::counted_api(api_id("cuOccupancyMaxActiveBlocksPerMultiprocessor")));

  Config config;
  std::snprintf(config.counted_calls, sizeof config.counted_calls, "%s", "default,-cuCtxGetCurrent,cuLaunchKernel");
  ASSERT_TRUE(install(config));
  EXPECT_FALSE(hooks::counted_api(api_id("cuCtxGetCurrent")));
  EXPECT_TRUE(hooks::counted_api(api_id("cuLaunchKernel")));
  EXPECT_TRUE(hooks::counted_api(api_id("cudaGetLastError")));

  std::snprintf(config.counted_calls, sizeof config.counted_calls, "%s", "none,cudaGetLastError");
  ASSERT_TRUE(install(config));
  EXPECT_FALSE(hooks::counted_api(api_id("cuCtxGetCurrent")));
  EXPECT_TRUE(hooks::counted_api(api_id("cudaGetLastError")));

  Config defaults;
  ASSERT_TRUE(install(defaults));
  EXPECT_TRUE(hooks::counted_api(api_id("cuCtxGetCurrent")));
}

}  // namespace
}  // namespace proflaunch::testing
