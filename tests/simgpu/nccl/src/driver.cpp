#include "driver.h"

#include <map>
#include <mutex>
#include <utility>

extern "C" const unsigned char simnccl_fatbin[];

namespace simnccl {
namespace {

Driver g_driver;
std::string g_error;
std::once_flag g_once;

void load() { load_driver(g_driver, g_error); }

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
