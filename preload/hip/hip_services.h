// HIP functions the shim calls for its own purposes (GPU timing, device
// descriptions, pointer kinds), resolved from the loaded libamdhip64 by name
// and called directly: never through the shim's own wrappers.
#pragma once

#include "preload/hip/hip_headers.h"

namespace proflaunch::hip {

struct HipServices {
  hipError_t (*event_create_with_flags)(hipEvent_t*, unsigned);
  hipError_t (*event_record)(hipEvent_t, hipStream_t);
  hipError_t (*event_query)(hipEvent_t);
  hipError_t (*event_synchronize)(hipEvent_t);
  hipError_t (*event_elapsed_time)(float*, hipEvent_t, hipEvent_t);
  hipError_t (*event_destroy)(hipEvent_t);
  hipError_t (*get_device_properties)(hipDeviceProp_t*, int);
  hipError_t (*pointer_get_attributes)(hipPointerAttribute_t*, const void*);
  hipError_t (*stream_is_capturing)(hipStream_t, hipStreamCaptureStatus*);
  hipError_t (*thread_exchange_stream_capture_mode)(hipStreamCaptureMode*);
  hipError_t (*set_device)(int);
  bool complete;  // every member above was found
};

// All null until libamdhip64 is loaded (the lookup is retried until it is).
const HipServices& hip_services() noexcept;

// The calling thread's HIP device (hipSetDevice: the hooks keep it; HIP
// starts every thread on device 0).
int current_device() noexcept;
void set_current_device(int device) noexcept;

// The device id AMD devices have in records: kAmdDeviceBase + ordinal, so
// that a process using both vendors' runtimes has distinct devices. Defines
// the device (DeviceInfo, vendor AMD) the first time.
int32_t recorded_device(int ordinal) noexcept;

}  // namespace proflaunch::hip
