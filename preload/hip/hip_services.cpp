#include "preload/hip/hip_services.h"

#include <atomic>
#include <cstring>
#include <string>

#include "formats/records.h"
#include "preload/hip/hip_hooks.h"
#include "preload/intercept/hook_registry.h"
#include "preload/record/definitions.h"

namespace proflaunch::hip {
namespace {

thread_local int tl_device = 0;

template <typename F>
bool resolve(F*& member, const char* symbol) {
  void* slot = nullptr;
  const intercept::HookEntry entry{symbol, nullptr, 0, false, kHipLibrary, nullptr, &slot};
  member = reinterpret_cast<F*>(intercept::real_function(entry));
  return member != nullptr;
}

constexpr int kMaxDevices = 64;
std::atomic<bool> g_defined[kMaxDevices];

}  // namespace

// Resolved once libamdhip64 is loaded (retried until then). A library that
// lacks some of these functions (an older or a stub one) leaves the
// services incomplete for good: the shim then does without them.
const HipServices& hip_services() noexcept {
  static HipServices services{};
  static std::atomic<bool> ready{false};
  if (ready.load(std::memory_order_acquire)) return services;
  HipServices s{};
  if (!resolve(s.event_create_with_flags, "hipEventCreateWithFlags")) return services;  // not loaded yet
  bool ok = resolve(s.event_record, "hipEventRecord");
  ok &= resolve(s.event_query, "hipEventQuery");
  ok &= resolve(s.event_synchronize, "hipEventSynchronize");
  ok &= resolve(s.event_elapsed_time, "hipEventElapsedTime");
  ok &= resolve(s.event_destroy, "hipEventDestroy");
  ok &= resolve(s.get_device_properties, "hipGetDeviceProperties");
  ok &= resolve(s.pointer_get_attributes, "hipPointerGetAttributes");
  ok &= resolve(s.stream_is_capturing, "hipStreamIsCapturing");
  ok &= resolve(s.thread_exchange_stream_capture_mode, "hipThreadExchangeStreamCaptureMode");
  ok &= resolve(s.set_device, "hipSetDevice");
  ok &= resolve(s.get_symbol_address, "hipGetSymbolAddress");
  ok &= resolve(s.peek_at_last_error, "hipPeekAtLastError");
  ok &= resolve(s.get_last_error, "hipGetLastError");
  s.complete = ok;
  // Optional. hipExtModuleLaunchKernel has C++ linkage in HIP 5.2 (hip_ext.h).
  resolve(s.ext_launch_kernel, "hipExtLaunchKernel");
  if (!resolve(s.ext_module_launch_kernel,
               "_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j"))
    resolve(s.ext_module_launch_kernel, "hipExtModuleLaunchKernel");
  if (ok) services = s;
  ready.store(true, std::memory_order_release);
  return services;
}

int current_device() noexcept { return tl_device; }
void set_current_device(int device) noexcept { tl_device = device; }

int32_t recorded_device(int ordinal) noexcept {
  if (ordinal >= 0 && ordinal < kMaxDevices && !g_defined[ordinal].load(std::memory_order_relaxed)) {
    const HipServices& hip = hip_services();
    const LastErrorGuard keep(hip);
    hipDeviceProp_t props;
    if (hip.complete && hip.get_device_properties(&props, ordinal) == hipSuccess &&
        !g_defined[ordinal].exchange(true)) {
      DeviceDescription device;
      device.device = format::kAmdDeviceBase + ordinal;
      device.vendor = format::Vendor::kAmd;
      std::string name = props.name;
      if (props.gcnArchName[0] != '\0') name += std::string(" ") + props.gcnArchName;
      device.name = name;
      device.multiprocessor_count = static_cast<uint32_t>(props.multiProcessorCount);
      device.total_memory_bytes = props.totalGlobalMem;
      define_device(device);
    }
  }
  return format::kAmdDeviceBase + ordinal;
}

}  // namespace proflaunch::hip
