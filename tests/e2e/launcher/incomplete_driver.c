/* A libcuda.so.1 that has only what a minimal launch loop calls (no events,
 * no stream destruction, no function names, no pointer queries): what an old or a stub
 * driver offers. The shim must run a program on it without crashing,
 * whatever GPU timing it was asked for (launcher_incomplete_driver_test). */
#include <cuda.h>

#define EXPORT __attribute__((visibility("default")))

static int g_context_storage;
static __thread CUcontext t_current;

EXPORT CUresult cuInit(unsigned int flags) { (void)flags; return CUDA_SUCCESS; }
EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) { *device = ordinal; return CUDA_SUCCESS; }
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  (void)device;
  *context = (CUcontext)&g_context_storage;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxSetCurrent(CUcontext context) { t_current = context; return CUDA_SUCCESS; }
EXPORT CUresult cuCtxGetCurrent(CUcontext* context) { *context = t_current; return CUDA_SUCCESS; }
/* A stream can be made but not destroyed, and there are no events. */
static int g_stream_storage;
EXPORT CUresult cuStreamCreate(CUstream* stream, unsigned int flags) {
  (void)flags;
  *stream = (CUstream)&g_stream_storage;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shared, CUstream stream, void** params, void** extra) {
  (void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shared; (void)stream;
  (void)params; (void)extra;
  return CUDA_SUCCESS;
}
