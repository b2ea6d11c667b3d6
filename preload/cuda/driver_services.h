// Driver functions the shim calls for its own purposes (naming functions,
// finding the device of a context, classifying pointers, GPU timing). They
// are resolved from the loaded libcuda by name, lazily, because libcuda is
// usually dlopen'ed long after the shim starts. Calls through these never
// pass through the shim's hooks.
#pragma once

#include <cuda.h>

namespace proflaunch::cuda {

struct DriverServices {
  CUresult (*ctx_get_current)(CUcontext*);
  CUresult (*ctx_set_current)(CUcontext);
  CUresult (*ctx_get_device)(CUdevice*);
  CUresult (*func_get_name)(const char**, CUfunction);
  CUresult (*kernel_get_name)(const char**, CUkernel);
  CUresult (*pointer_get_attribute)(void*, CUpointer_attribute, CUdeviceptr);
  CUresult (*stream_get_id)(CUstream, unsigned long long*);
  CUresult (*device_get_name)(char*, int, CUdevice);
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice);
  CUresult (*device_total_mem)(size_t*, CUdevice);
  CUresult (*device_get_uuid)(CUuuid*, CUdevice);
  CUresult (*event_create)(CUevent*, unsigned int);
  CUresult (*event_record)(CUevent, CUstream);
  CUresult (*event_query)(CUevent);
  CUresult (*event_synchronize)(CUevent);
  CUresult (*event_elapsed_time)(float*, CUevent, CUevent);
  CUresult (*event_destroy)(CUevent);
  CUresult (*stream_create)(CUstream*, unsigned int);
  CUresult (*stream_destroy)(CUstream);
};

// Null members where the loaded driver lacks a function, and all of them
// while no driver is loaded yet (the lookup is retried until one is).
const DriverServices& driver_services() noexcept;

// The device of the calling thread's current context, and the context. Cached
// per thread: one cuCtxGetCurrent per call, cuCtxGetDevice only when the
// context changed. -1 / nullptr when there is none.
int current_device(CUcontext* context) noexcept;

}  // namespace proflaunch::cuda
