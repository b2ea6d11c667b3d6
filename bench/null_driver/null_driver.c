/* A driver that does nothing: every call returns CUDA_SUCCESS at once.
 * Benchmarks run a launch loop on it with and without the shim, so the
 * difference is the shim's own cost, free of the simulated driver's ~1 us of
 * queueing per launch. Only what the loop and the shim's services call is
 * defined. Not a test double for correctness: nothing here runs in tests. */
#include <cuda.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static int g_context_storage;
static CUcontext const g_context = (CUcontext)&g_context_storage;
static __thread CUcontext t_current;

EXPORT CUresult cuInit(unsigned int flags) { (void)flags; return CUDA_SUCCESS; }
EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) { *device = ordinal; return CUDA_SUCCESS; }
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  (void)device;
  *context = g_context;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxSetCurrent(CUcontext context) { t_current = context; return CUDA_SUCCESS; }
EXPORT CUresult cuCtxGetCurrent(CUcontext* context) { *context = t_current; return CUDA_SUCCESS; }
EXPORT CUresult cuCtxGetDevice(CUdevice* device) { *device = 0; return CUDA_SUCCESS; }
EXPORT CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  (void)device;
  strncpy(name, "Null GPU", (size_t)length);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  (void)attribute; (void)device;
  *value = 1;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice device) {
  (void)device;
  *bytes = 1u << 30;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncGetName(const char** name, CUfunction function) {
  (void)function;
  *name = "null_kernel";
  return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamCreate(CUstream* stream, unsigned int flags) {
  (void)flags;
  static int storage;
  *stream = (CUstream)&storage;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamSynchronize(CUstream stream) { (void)stream; return CUDA_SUCCESS; }
EXPORT CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  (void)image;
  static int storage;
  *module = (CUmodule)&storage;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  (void)module; (void)name;
  static int storage;
  *function = (CUfunction)&storage;
  return CUDA_SUCCESS;
}
/* A graph launch (figure l): the executable graph is any handle. */
EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream) { (void)exec; (void)stream; return CUDA_SUCCESS; }
EXPORT CUresult cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus* status) {
  (void)stream;
  *status = CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                               unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                               CUstream stream, void** params, void** extra) {
  (void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shmem;
  (void)stream; (void)params; (void)extra;
  return CUDA_SUCCESS;
}
/* Allocation returns at once with a new address each time (never reused, so a
 * memory model reading the trace sees distinct blocks); nothing is tracked. */
EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  static __thread CUdeviceptr next = 0x10000000;
  *dptr = next;
  next += (bytesize + 511) / 512 * 512;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) { (void)dptr; return CUDA_SUCCESS; }
