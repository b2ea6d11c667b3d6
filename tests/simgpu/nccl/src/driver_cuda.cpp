// How the simulated libnccl.so.2 reaches the GPU: as the real NCCL does,
// dlopen("libcuda.so.1") and cuGetProcAddress_v2 for each driver function.
#include <dlfcn.h>

#include "driver.h"

namespace simnccl {
namespace {

template <typename Fn>
bool resolve(PFN_cuGetProcAddress_v12000 get_proc_address, const char* name, Fn* out) {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult rc = get_proc_address(name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  if (rc != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || fn == nullptr) return false;
  *out = reinterpret_cast<Fn>(fn);
  return true;
}

}  // namespace

void load_driver(Driver& out, std::string& error) {
  // RTLD_LOCAL, like NCCL: only cuGetProcAddress_v2 is looked up by name.
  void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (libcuda == nullptr) {
    error = "libcuda.so.1 could not be loaded";
    return;
  }
  auto get = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(libcuda, "cuGetProcAddress_v2"));
  if (get == nullptr) {
    error = "libcuda.so.1 has no cuGetProcAddress_v2";
    return;
  }
  Driver d{};
  const bool ok = resolve(get, "cuInit", &d.init) && resolve(get, "cuDeviceGet", &d.device_get) &&
                  resolve(get, "cuDeviceGetCount", &d.device_get_count) &&
                  resolve(get, "cuCtxGetCurrent", &d.ctx_get_current) &&
                  resolve(get, "cuCtxSetCurrent", &d.ctx_set_current) &&
                  resolve(get, "cuCtxGetDevice", &d.ctx_get_device) &&
                  resolve(get, "cuDevicePrimaryCtxRetain", &d.primary_ctx_retain) &&
                  resolve(get, "cuLibraryLoadData", &d.library_load_data) &&
                  resolve(get, "cuLibraryGetKernel", &d.library_get_kernel) &&
                  resolve(get, "cuKernelGetFunction", &d.kernel_get_function) &&
                  resolve(get, "cuLaunchKernel", &d.launch_kernel) &&
                  resolve(get, "cuLaunchHostFunc", &d.launch_host_func);
  if (!ok) {
    error = "cuGetProcAddress_v2 did not resolve every driver function the simulated NCCL needs";
    return;
  }
  out = d;
}

}  // namespace simnccl
