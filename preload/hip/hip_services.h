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
  hipError_t (*get_symbol_address)(void**, const void*);
  hipError_t (*peek_at_last_error)();
  hipError_t (*get_last_error)();
  bool complete;  // every member above was found

  // The extended launches, which bind two events to a kernel's dispatch
  // (hip_kernel_launch.h); null in a runtime without them.
  hipError_t (*ext_launch_kernel)(const void*, dim3, dim3, void**, size_t, hipStream_t, hipEvent_t, hipEvent_t, int);
  hipError_t (*ext_module_launch_kernel)(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
                                         size_t, hipStream_t, void**, void**, hipEvent_t, hipEvent_t, uint32_t);
  // A kernel's resource use (registers, LDS), for occupancy; null if absent.
  hipError_t (*func_get_attributes)(hipFuncAttributes*, const void*);
  hipError_t (*func_get_attribute)(int*, hipFunction_attribute, hipFunction_t);
  // The GPU timing's private streams (hip_timing.cpp); null: anchors go on
  // the null stream.
  hipError_t (*stream_create_with_flags)(hipStream_t*, unsigned);
  // The device's UUID (DeviceInfo.uuid, what device metrics are matched by);
  // null in a runtime without it (HIP before 5.1).
  hipError_t (*device_get_uuid)(hipUUID*, hipDevice_t);
};

// All null until libamdhip64 is loaded (the lookup is retried until it is).
const HipServices& hip_services() noexcept;

// Every failing HIP call sets the calling thread's last error
// (hipGetLastError), which a program reads: the shim's own calls on a
// program thread must leave it as it was. Around them: when the thread had
// no error before and has one after, it is cleared again. A thread that
// already carries an error is left alone by callers that check
// `clean_before()` and skip calls that may fail (pointer classification).
class LastErrorGuard {
 public:
  explicit LastErrorGuard(const HipServices& hip) noexcept
      : hip_(hip), clean_(hip.complete && hip.peek_at_last_error() == hipSuccess) {}
  ~LastErrorGuard() {
    if (clean_ && hip_.peek_at_last_error() != hipSuccess) (void)hip_.get_last_error();
  }
  LastErrorGuard(const LastErrorGuard&) = delete;
  LastErrorGuard& operator=(const LastErrorGuard&) = delete;
  bool clean_before() const noexcept { return clean_; }

 private:
  const HipServices& hip_;
  bool clean_;
};

// The calling thread's HIP device (hipSetDevice: the hooks keep it; HIP
// starts every thread on device 0).
int current_device() noexcept;
void set_current_device(int device) noexcept;

// After a kernel's first successful launch: asks the runtime what the kernel
// uses (hipFuncGetAttributes for a registered kernel's host stub,
// hipFuncGetAttribute for a module's hipFunction_t) and writes its
// FunctionDef again with them (valid as long as the definition it completes).
// Asked after the launch, not at registration: the query loads the code
// object, which belongs to the first launch (docs/amd.md).
void describe_function_resources(uint64_t handle, bool module_function) noexcept;

// The device id AMD devices have in records: kAmdDeviceBase + ordinal, so
// that a process using both vendors' runtimes has distinct devices. Defines
// the device (DeviceInfo, vendor AMD) the first time.
int32_t recorded_device(int ordinal) noexcept;

}  // namespace proflaunch::hip
