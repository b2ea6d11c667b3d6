// How the simulated librccl.so.1 reaches the GPU: the simulated NCCL's
// driver functions, done with the HIP runtime it is linked against (as RCCL
// is linked against libamdhip64). A "context" is the HIP device ordinal + 1;
// the kernels come from an AMD code object bundle built by hipcc from the
// same kernels.cu (simnccl_fatbin in this library), loaded as a module.
// Streams are the program's hipStream_t handles, passed through.
#include <cstdint>

#include "driver.h"
#include "preload/hip/hip_headers.h"

namespace simnccl {
namespace {

// HIP's error numbers are the driver's for every error both have.
CUresult cu(hipError_t error) { return static_cast<CUresult>(error); }

CUcontext context_of(int device) { return reinterpret_cast<CUcontext>(static_cast<uintptr_t>(device) + 1); }
int device_of(CUcontext context) { return static_cast<int>(reinterpret_cast<uintptr_t>(context)) - 1; }

CUresult init(unsigned int flags) { return cu(hipInit(flags)); }

CUresult device_get(CUdevice* device, int ordinal) {
  int count = 0;
  if (hipError_t e = hipGetDeviceCount(&count); e != hipSuccess) return cu(e);
  if (ordinal < 0 || ordinal >= count) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult device_get_count(int* count) { return cu(hipGetDeviceCount(count)); }

CUresult ctx_get_current(CUcontext* context) {
  int device = 0;
  if (hipError_t e = hipGetDevice(&device); e != hipSuccess) return cu(e);
  *context = context_of(device);
  return CUDA_SUCCESS;
}

CUresult ctx_set_current(CUcontext context) { return cu(hipSetDevice(device_of(context))); }

CUresult ctx_get_device(CUdevice* device, CUcontext context) {
  *device = device_of(context);
  return CUDA_SUCCESS;
}

CUresult primary_ctx_retain(CUcontext* context, CUdevice device) {
  *context = context_of(device);
  return CUDA_SUCCESS;
}

CUresult library_load_data(CUlibrary* library, const void* code, CUjit_option*, void**, unsigned int,
                           CUlibraryOption*, void**, unsigned int) {
  return cu(hipModuleLoadData(reinterpret_cast<hipModule_t*>(library), code));
}

CUresult library_get_kernel(CUkernel* kernel, CUlibrary library, const char* name) {
  return cu(hipModuleGetFunction(reinterpret_cast<hipFunction_t*>(kernel), reinterpret_cast<hipModule_t>(library),
                                 name));
}

CUresult kernel_get_function(CUfunction* function, CUkernel kernel) {
  *function = reinterpret_cast<CUfunction>(kernel);
  return CUDA_SUCCESS;
}

CUresult launch_kernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                       unsigned int by, unsigned int bz, unsigned int shared_bytes, CUstream stream, void** params,
                       void** extra) {
  return cu(hipModuleLaunchKernel(reinterpret_cast<hipFunction_t>(f), gx, gy, gz, bx, by, bz, shared_bytes,
                                  reinterpret_cast<hipStream_t>(stream), params, extra));
}

// HIP 5.2 exports no hipLaunchHostFunc: a stream callback runs the function.
struct HostCall {
  CUhostFn fn;
  void* data;
};

void run_host_call(hipStream_t, hipError_t, void* user_data) {
  auto* call = static_cast<HostCall*>(user_data);
  call->fn(call->data);
  delete call;
}

CUresult launch_host_func(CUstream stream, CUhostFn fn, void* data) {
  auto* call = new HostCall{fn, data};
  const hipError_t e = hipStreamAddCallback(reinterpret_cast<hipStream_t>(stream), run_host_call, call, 0);
  if (e != hipSuccess) delete call;
  return cu(e);
}

}  // namespace

void load_driver(Driver& driver, std::string&) {
  driver = Driver{init,
                  device_get,
                  device_get_count,
                  ctx_get_current,
                  ctx_set_current,
                  ctx_get_device,
                  primary_ctx_retain,
                  library_load_data,
                  library_get_kernel,
                  kernel_get_function,
                  launch_kernel,
                  launch_host_func};
}

}  // namespace simnccl
