#include "driver_entry_points.h"

#include <dlfcn.h>

#include <mutex>

namespace simblas {
namespace {

DriverEntryPoints g_entry_points;
const char* g_error = nullptr;
std::once_flag g_once;

template <typename Fn>
bool resolve(PFN_cuGetProcAddress_v12000 get_proc_address, const char* name, Fn* out) {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult rc =
      get_proc_address(name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  if (rc != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || fn == nullptr) return false;
  *out = reinterpret_cast<Fn>(fn);
  return true;
}

void load_driver() {
  // RTLD_LOCAL like cuBLAS: the driver's symbols stay out of the global
  // scope, so only cuGetProcAddress_v2 is ever looked up by name.
  void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (libcuda == nullptr) {
    g_error = "libcuda.so.1 could not be loaded";
    return;
  }
  auto get_proc_address =
      reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(libcuda, "cuGetProcAddress_v2"));
  if (get_proc_address == nullptr) {
    g_error = "libcuda.so.1 has no cuGetProcAddress_v2";
    return;
  }
  // Base names, as real libraries ask for them: the driver picks the ABI
  // version (cuMemAlloc -> cuMemAlloc_v2) from CUDA_VERSION.
  DriverEntryPoints e{};
  const bool ok = resolve(get_proc_address, "cuInit", &e.init) &&
                  resolve(get_proc_address, "cuDeviceGet", &e.device_get) &&
                  resolve(get_proc_address, "cuDeviceGetAttribute", &e.device_get_attribute) &&
                  resolve(get_proc_address, "cuCtxGetCurrent", &e.ctx_get_current) &&
                  resolve(get_proc_address, "cuCtxSetCurrent", &e.ctx_set_current) &&
                  resolve(get_proc_address, "cuCtxGetDevice", &e.ctx_get_device) &&
                  resolve(get_proc_address, "cuDevicePrimaryCtxRetain", &e.primary_ctx_retain) &&
                  resolve(get_proc_address, "cuLibraryLoadData", &e.library_load_data) &&
                  resolve(get_proc_address, "cuLibraryGetKernel", &e.library_get_kernel) &&
                  resolve(get_proc_address, "cuKernelGetFunction", &e.kernel_get_function) &&
                  resolve(get_proc_address, "cuMemAlloc", &e.mem_alloc) &&
                  resolve(get_proc_address, "cuMemFree", &e.mem_free) &&
                  resolve(get_proc_address, "cuLaunchKernel", &e.launch_kernel);
  if (!ok) {
    g_error = "cuGetProcAddress_v2 did not resolve every driver function simblas needs";
    return;
  }
  g_entry_points = e;
}

}  // namespace

const DriverEntryPoints* driver_entry_points(const char** error) {
  std::call_once(g_once, load_driver);
  if (g_error != nullptr) {
    if (error != nullptr) *error = g_error;
    return nullptr;
  }
  return &g_entry_points;
}

}  // namespace simblas
