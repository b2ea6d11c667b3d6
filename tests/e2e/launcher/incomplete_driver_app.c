/* Launches through whatever libcuda.so.1 the library path finds (dlopen +
 * dlsym, as Triton does) and prints "incomplete_driver_app: N launches ok". */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>

int main(void) {
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cuda == NULL) return 2;
  CUresult (*init)(unsigned) = (CUresult(*)(unsigned))dlsym(cuda, "cuInit");
  CUresult (*device_get)(CUdevice*, int) = (CUresult(*)(CUdevice*, int))dlsym(cuda, "cuDeviceGet");
  CUresult (*retain)(CUcontext*, CUdevice) = (CUresult(*)(CUcontext*, CUdevice))dlsym(cuda, "cuDevicePrimaryCtxRetain");
  CUresult (*set_current)(CUcontext) = (CUresult(*)(CUcontext))dlsym(cuda, "cuCtxSetCurrent");
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                     void**, void**) =
      (CUresult(*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**,
                   void**))dlsym(cuda, "cuLaunchKernel");
  if (!init || !device_get || !retain || !set_current || !launch) return 3;
  CUdevice device;
  CUcontext context;
  if (init(0) || device_get(&device, 0) || retain(&context, device) || set_current(context)) return 4;
  static int function_storage;
  int ok = 0;
  for (int i = 0; i < 10; ++i)
    ok += launch((CUfunction)&function_storage, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) == CUDA_SUCCESS;
  printf("incomplete_driver_app: %d launches ok\n", ok);
  return ok == 10 ? 0 : 5;
}
