// cuGetProcAddress hands out the simulator's own functions by ABI variant,
// exactly as the runtime and libraries reach the driver: dlopen("libcuda.so.1")
// then cuGetProcAddress_v2.
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "driver_test_support.h"

namespace {

void* libcuda() {
  static void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  return handle;
}

void* symbol(const char* name) { return dlsym(libcuda(), name); }

struct Lookup {
  CUresult result = CUDA_ERROR_UNKNOWN;
  void* pfn = reinterpret_cast<void*>(1);
  CUdriverProcAddressQueryResult status = CUdriverProcAddressQueryResult(-1);
};

Lookup lookup(const char* name, int version, cuuint64_t flags) {
  Lookup found;
  found.result = cuGetProcAddress_v2(name, &found.pfn, version, flags, &found.status);
  return found;
}

TEST(LibraryIdentity, TheSimulatedDriverComesFromTheBuildTree) {
  ASSERT_NE(nullptr, libcuda()) << "libcuda.so.1 is not loaded";
  Dl_info info{};
  ASSERT_NE(0, dladdr(reinterpret_cast<void*>(&cuInit), &info));
  const char* expected = std::getenv("SIMGPU_EXPECTED_LIBCUDA");
  ASSERT_NE(nullptr, expected);
  char resolved_loaded[4096], resolved_expected[4096];
  ASSERT_NE(nullptr, realpath(info.dli_fname, resolved_loaded));
  ASSERT_NE(nullptr, realpath(expected, resolved_expected));
  EXPECT_STREQ(resolved_expected, resolved_loaded);
}

TEST(ProcAddress, DlopenThenGetProcAddressReachesTheDriver) {
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(nullptr, handle) << dlerror();
  auto get_proc = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(handle, "cuGetProcAddress_v2"));
  ASSERT_NE(nullptr, get_proc);
  void* init = nullptr;
  CUdriverProcAddressQueryResult status{};
  ASSERT_CU_OK(get_proc("cuInit", &init, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &status));
  ASSERT_EQ(CU_GET_PROC_ADDRESS_SUCCESS, status);
  ASSERT_CU_OK(reinterpret_cast<PFN_cuInit_v2000>(init)(0));
  void* driver_version = nullptr;
  ASSERT_CU_OK(get_proc("cuDriverGetVersion", &driver_version, 13000, 0, &status));
  int version = 0;
  ASSERT_CU_OK(reinterpret_cast<PFN_cuDriverGetVersion_v2020>(driver_version)(&version));
  EXPECT_EQ(13000, version);
  dlclose(handle);
}

TEST(ProcAddress, VersionSelectsTheAbiVariant) {
  Lookup modern = lookup("cuMemAlloc", 13000, CU_GET_PROC_ADDRESS_DEFAULT);
  ASSERT_CU_OK(modern.result);
  EXPECT_EQ(CU_GET_PROC_ADDRESS_SUCCESS, modern.status);
  EXPECT_EQ(symbol("cuMemAlloc_v2"), modern.pfn);
  EXPECT_EQ(symbol("cuMemAlloc_v2"), lookup("cuMemAlloc", 3020, 0).pfn) << "introduced in 3.2";
  EXPECT_EQ(symbol("cuMemAlloc"), lookup("cuMemAlloc", 3010, 0).pfn) << "before 3.2: the 32-bit ABI";
  EXPECT_EQ(symbol("cuCtxCreate_v4"), lookup("cuCtxCreate", 13000, 0).pfn);
  EXPECT_EQ(symbol("cuCtxCreate_v3"), lookup("cuCtxCreate", 12000, 0).pfn);
  EXPECT_EQ(symbol("cuEventElapsedTime_v2"), lookup("cuEventElapsedTime", 12080, 0).pfn);
  EXPECT_EQ(symbol("cuEventElapsedTime"), lookup("cuEventElapsedTime", 12060, 0).pfn);
  EXPECT_EQ(symbol("cuGetProcAddress_v2"), lookup("cuGetProcAddress", 12000, 0).pfn);
  EXPECT_EQ(symbol("cuGetProcAddress"), lookup("cuGetProcAddress", 11030, 0).pfn);
}

TEST(ProcAddress, PerThreadFlagSelectsPtszAndPtdsVariants) {
  constexpr auto kPerThread = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  constexpr auto kLegacy = CU_GET_PROC_ADDRESS_LEGACY_STREAM;
  EXPECT_EQ(symbol("cuMemcpyHtoD_v2_ptds"), lookup("cuMemcpyHtoD", 13000, kPerThread).pfn);
  EXPECT_EQ(symbol("cuMemcpyHtoD_v2"), lookup("cuMemcpyHtoD", 13000, kLegacy).pfn);
  EXPECT_EQ(symbol("cuMemcpyHtoD_v2"), lookup("cuMemcpyHtoD", 13000, CU_GET_PROC_ADDRESS_DEFAULT).pfn)
      << "the driver treats DEFAULT as legacy; cuda.h maps it for per-thread builds";
  EXPECT_EQ(symbol("cuLaunchKernel_ptsz"), lookup("cuLaunchKernel", 13000, kPerThread).pfn);
  EXPECT_EQ(symbol("cuLaunchKernel"), lookup("cuLaunchKernel", 13000, kLegacy).pfn);
  EXPECT_EQ(symbol("cuStreamGetCaptureInfo_v3_ptsz"), lookup("cuStreamGetCaptureInfo", 13000, kPerThread).pfn);
  EXPECT_EQ(symbol("cuStreamGetCaptureInfo_v2_ptsz"), lookup("cuStreamGetCaptureInfo", 12000, kPerThread).pfn);
  // Per-thread variant not yet introduced at that version: the legacy one.
  EXPECT_EQ(symbol("cuMemcpyHtoD_v2"), lookup("cuMemcpyHtoD", 6050, kPerThread).pfn);
  // No per-thread variant at all: the legacy one.
  EXPECT_EQ(symbol("cuMemAlloc_v2"), lookup("cuMemAlloc", 13000, kPerThread).pfn);
}

TEST(ProcAddress, UnknownSymbolsAndOldVersionsAreReportedNotFailed) {
  Lookup unknown = lookup("cuNoSuchFunction", 13000, 0);
  EXPECT_CU_OK(unknown.result);
  EXPECT_EQ(nullptr, unknown.pfn);
  EXPECT_EQ(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, unknown.status);

  Lookup suffixed = lookup("cuMemAlloc_v2", 13000, 0);
  EXPECT_EQ(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, suffixed.status) << "the base name is the key";

  Lookup too_old = lookup("cuLaunchKernelEx", 11000, 0);  // introduced in 11.6
  EXPECT_CU_OK(too_old.result);
  EXPECT_EQ(nullptr, too_old.pfn);
  EXPECT_EQ(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, too_old.status);

  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, lookup("cuInit", 13010, 0).result) << "newer than the driver (13.0)";
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, lookup("cuInit", 13000, 4).result) << "unknown flag";
  void* pfn = nullptr;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGetProcAddress_v2(nullptr, &pfn, 13000, 0, nullptr));
}

TEST(ProcAddress, VersionOneEntryPointAgrees) {
  // cuda.h maps the name cuGetProcAddress to _v2; the CUDA 11.3 ABI is the unsuffixed symbol.
  auto version_one = reinterpret_cast<PFN_cuGetProcAddress_v11030>(symbol("cuGetProcAddress"));
  ASSERT_NE(nullptr, version_one);
  void* pfn = nullptr;
  ASSERT_CU_OK(version_one("cuStreamSynchronize", &pfn, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM));
  EXPECT_EQ(symbol("cuStreamSynchronize_ptsz"), pfn);
}

TEST(ProcAddress, UnimplementedFunctionsExistAndSayNotSupported) {
  Lookup add_signal = lookup("cuGraphAddExternalSemaphoresSignalNode", 13000, 0);
  ASSERT_NE(nullptr, add_signal.pfn);
  CUgraphNode node = nullptr;
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED,
            reinterpret_cast<PFN_cuGraphAddExternalSemaphoresSignalNode_v11020>(add_signal.pfn)(
                &node, nullptr, nullptr, 0, nullptr));
  const void* table = reinterpret_cast<const void*>(1);
  CUuuid id{};
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuGetExportTable(&table, &id));
}

TEST(ProcAddress, HandsOutTheDriversOwnFunctionEvenWhenTheNameIsInterposed) {
  // The address from cuGetProcAddress is the library's definition, which is
  // also what dlsym on the library handle finds (not a preloaded wrapper).
  EXPECT_EQ(symbol("cuStreamQuery"), lookup("cuStreamQuery", 13000, 0).pfn);
  EXPECT_EQ(dlsym(libcuda(), "cuMemFree_v2"), lookup("cuMemFree", 13000, 0).pfn);
}

}  // namespace
