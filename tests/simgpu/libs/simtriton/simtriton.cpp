#include "simtriton.h"

#include <dlfcn.h>

#include <mutex>

extern "C" const unsigned char simtriton_cubin[];

namespace {

// Exported names as Triton and XLA spell them in dlsym calls: the versioned
// ABI names (cuMemAlloc_v2), since the unsuffixed exports are the legacy
// 32-bit entry points kept for old binaries.
struct DriverSymbols {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuCtxGetCurrent)(CUcontext*);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuMemAlloc_v2)(CUdeviceptr*, size_t);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void**, void**);
};

struct LoadedModule {
  CUfunction add_mul = nullptr;
  CUfunction softmax = nullptr;
  CUdeviceptr global_scratch = 0;
};

constexpr size_t kGlobalScratchBytes = 1 << 16;
constexpr int kAddMulBlockElements = 1024;  // XBLOCK of the pointwise kernel
constexpr int kNumWarps = 4;

DriverSymbols g_driver;
const char* g_driver_error = nullptr;
std::once_flag g_driver_once;

std::mutex g_module_mutex;
CUcontext g_module_context = nullptr;  // the module is loaded once, into this context
LoadedModule g_module;

thread_local const char* t_last_error = "";

template <typename Fn>
bool lookup(void* libcuda, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(libcuda, name));
  return *out != nullptr;
}

void open_driver() {
  // The driver is normally loaded already (by libcudart); NOLOAD finds it
  // without a second search, the plain dlopen covers standalone use.
  void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (libcuda == nullptr) libcuda = dlopen("libcuda.so.1", RTLD_NOW);
  if (libcuda == nullptr) {
    g_driver_error = "libcuda.so.1 could not be loaded";
    return;
  }
  DriverSymbols d{};
  if (!(lookup(libcuda, "cuInit", &d.cuInit) && lookup(libcuda, "cuDeviceGet", &d.cuDeviceGet) &&
        lookup(libcuda, "cuCtxGetCurrent", &d.cuCtxGetCurrent) &&
        lookup(libcuda, "cuCtxSetCurrent", &d.cuCtxSetCurrent) &&
        lookup(libcuda, "cuDevicePrimaryCtxRetain", &d.cuDevicePrimaryCtxRetain) &&
        lookup(libcuda, "cuModuleLoadData", &d.cuModuleLoadData) &&
        lookup(libcuda, "cuModuleGetFunction", &d.cuModuleGetFunction) &&
        lookup(libcuda, "cuMemAlloc_v2", &d.cuMemAlloc_v2) &&
        lookup(libcuda, "cuLaunchKernel", &d.cuLaunchKernel))) {
    g_driver_error = "libcuda.so.1 lacks a driver function simtriton needs";
    return;
  }
  g_driver = d;
}

CUresult fail(CUresult rc, const char* what) {
  t_last_error = what;
  return rc;
}

CUresult ensure_loaded() {
  std::call_once(g_driver_once, open_driver);
  if (g_driver_error != nullptr) return fail(CUDA_ERROR_NOT_INITIALIZED, g_driver_error);
  const DriverSymbols& d = g_driver;
  CUresult rc = d.cuInit(0);
  if (rc != CUDA_SUCCESS) return fail(rc, "cuInit failed");

  CUcontext context = nullptr;
  if ((rc = d.cuCtxGetCurrent(&context)) != CUDA_SUCCESS) return fail(rc, "cuCtxGetCurrent failed");
  if (context == nullptr) {
    CUdevice device = 0;
    if ((rc = d.cuDeviceGet(&device, 0)) != CUDA_SUCCESS) return fail(rc, "cuDeviceGet failed");
    if ((rc = d.cuDevicePrimaryCtxRetain(&context, device)) != CUDA_SUCCESS)
      return fail(rc, "cuDevicePrimaryCtxRetain failed");
    if ((rc = d.cuCtxSetCurrent(context)) != CUDA_SUCCESS)
      return fail(rc, "cuCtxSetCurrent failed");
  }

  std::lock_guard<std::mutex> lock(g_module_mutex);
  if (g_module_context != nullptr) {
    if (g_module_context == context) return CUDA_SUCCESS;
    return fail(CUDA_ERROR_INVALID_CONTEXT, "simtriton was initialized in another context");
  }
  LoadedModule m;
  CUmodule module = nullptr;
  if ((rc = d.cuModuleLoadData(&module, simtriton_cubin)) != CUDA_SUCCESS)
    return fail(rc, "cuModuleLoadData failed on the embedded cubin");
  if ((rc = d.cuModuleGetFunction(&m.add_mul, module, "triton_poi_fused_add_mul_0")) !=
          CUDA_SUCCESS ||
      (rc = d.cuModuleGetFunction(&m.softmax, module, "triton_red_fused__softmax_1")) !=
          CUDA_SUCCESS)
    return fail(rc, "cuModuleGetFunction failed");
  if ((rc = d.cuMemAlloc_v2(&m.global_scratch, kGlobalScratchBytes)) != CUDA_SUCCESS)
    return fail(rc, "cuMemAlloc_v2 failed for the global scratch buffer");
  g_module = m;
  g_module_context = context;
  return CUDA_SUCCESS;
}

CUresult launch(CUfunction function, unsigned grid_x, unsigned shared_bytes, CUstream stream,
                void** params) {
  const CUresult rc = g_driver.cuLaunchKernel(function, grid_x, 1, 1, 32 * kNumWarps, 1, 1,
                                              shared_bytes, stream, params, nullptr);
  return rc == CUDA_SUCCESS ? rc : fail(rc, "cuLaunchKernel failed");
}

}  // namespace

extern "C" CUresult simtritonInit(void) { return ensure_loaded(); }

extern "C" CUresult simtritonAddMul(CUstream stream, CUdeviceptr in0, CUdeviceptr in1,
                                    CUdeviceptr out, int n) {
  CUresult rc = ensure_loaded();
  if (rc != CUDA_SUCCESS) return rc;
  if (n <= 0) return fail(CUDA_ERROR_INVALID_VALUE, "n must be positive");
  CUdeviceptr scratch = g_module.global_scratch;
  void* params[] = {&in0, &in1, &out, &n, &scratch};
  const unsigned grid = unsigned((n + kAddMulBlockElements - 1) / kAddMulBlockElements);
  return launch(g_module.add_mul, grid, 0, stream, params);
}

extern "C" CUresult simtritonSoftmax(CUstream stream, CUdeviceptr in, CUdeviceptr out, int rows,
                                     int cols) {
  CUresult rc = ensure_loaded();
  if (rc != CUDA_SUCCESS) return rc;
  if (rows <= 0 || cols <= 0)
    return fail(CUDA_ERROR_INVALID_VALUE, "rows and cols must be positive");
  CUdeviceptr scratch = g_module.global_scratch;
  void* params[] = {&in, &out, &rows, &cols, &scratch};
  return launch(g_module.softmax, unsigned(rows), 0, stream, params);
}

extern "C" const char* simtritonLastError(void) { return t_last_error; }
