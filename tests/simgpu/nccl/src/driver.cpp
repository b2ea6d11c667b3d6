#include "driver.h"

#include <dlfcn.h>

#include <map>
#include <mutex>
#include <utility>

extern "C" const unsigned char simnccl_fatbin[];

namespace simnccl {
namespace {

Driver g_driver;
std::string g_error;
std::once_flag g_once;

template <typename Fn>
bool resolve(PFN_cuGetProcAddress_v12000 get_proc_address, const char* name, Fn* out) {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult rc = get_proc_address(name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  if (rc != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || fn == nullptr) return false;
  *out = reinterpret_cast<Fn>(fn);
  return true;
}

void load() {
  // RTLD_LOCAL, like NCCL: only cuGetProcAddress_v2 is looked up by name.
  void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (libcuda == nullptr) {
    g_error = "libcuda.so.1 could not be loaded";
    return;
  }
  auto get = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(libcuda, "cuGetProcAddress_v2"));
  if (get == nullptr) {
    g_error = "libcuda.so.1 has no cuGetProcAddress_v2";
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
    g_error = "cuGetProcAddress_v2 did not resolve every driver function the simulated NCCL needs";
    return;
  }
  g_driver = d;
}

std::mutex g_kernels_mutex;
CUlibrary g_library = nullptr;
std::map<std::pair<CUcontext, std::string>, CUfunction> g_functions;

std::string mangled(const std::string& name) {
  return "_Z" + std::to_string(name.size()) + name + "24ncclDevKernelArgsStorageILm4096EE";
}

}  // namespace

const Driver* driver(std::string& error) {
  std::call_once(g_once, load);
  if (!g_error.empty()) {
    error = g_error;
    return nullptr;
  }
  return &g_driver;
}

CUresult current_or_primary_context(const Driver& d, int fallback_device, CUcontext* context, int* device) {
  if (CUresult rc = d.init(0); rc != CUDA_SUCCESS) return rc;
  CUcontext current = nullptr;
  if (CUresult rc = d.ctx_get_current(&current); rc != CUDA_SUCCESS) return rc;
  if (current == nullptr) {
    CUdevice dev = 0;
    if (CUresult rc = d.device_get(&dev, fallback_device); rc != CUDA_SUCCESS) return rc;
    if (CUresult rc = d.primary_ctx_retain(&current, dev); rc != CUDA_SUCCESS) return rc;
    if (CUresult rc = d.ctx_set_current(current); rc != CUDA_SUCCESS) return rc;
  }
  CUdevice dev = 0;
  if (CUresult rc = d.ctx_get_device(&dev, current); rc != CUDA_SUCCESS) return rc;
  *context = current;
  *device = dev;
  return CUDA_SUCCESS;
}

CUresult kernel_function(const Driver& d, CUcontext context, const std::string& name, CUfunction* function) {
  std::lock_guard lock(g_kernels_mutex);
  auto found = g_functions.find({context, name});
  if (found != g_functions.end()) {
    *function = found->second;
    return CUDA_SUCCESS;
  }
  if (g_library == nullptr) {
    if (CUresult rc = d.library_load_data(&g_library, simnccl_fatbin, nullptr, nullptr, 0, nullptr, nullptr, 0);
        rc != CUDA_SUCCESS)
      return rc;
  }
  CUkernel kernel = nullptr;
  if (CUresult rc = d.library_get_kernel(&kernel, g_library, mangled(name).c_str()); rc != CUDA_SUCCESS) return rc;
  if (CUresult rc = d.kernel_get_function(function, kernel); rc != CUDA_SUCCESS) return rc;
  g_functions.emplace(std::make_pair(context, name), *function);
  return CUDA_SUCCESS;
}

}  // namespace simnccl
