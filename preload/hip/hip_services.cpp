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
  resolve(s.func_get_attributes, "hipFuncGetAttributes");
  resolve(s.func_get_attribute, "hipFuncGetAttribute");
  resolve(s.stream_create_with_flags, "hipStreamCreateWithFlags");
  resolve(s.device_get_uuid, "hipDeviceGetUuid");
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
      // What AMD occupancy needs (stats/amd_occupancy.h): LDS per CU and the
      // wavefront size; the target is in the name.
      auto count = [](int value) { return value > 0 ? static_cast<uint32_t>(value) : 0u; };
      device.max_threads_per_multiprocessor = count(props.maxThreadsPerMultiProcessor);
      device.registers_per_block = count(props.regsPerBlock);
      device.shared_bytes_per_multiprocessor = static_cast<uint32_t>(props.maxSharedMemoryPerMultiProcessor);
      device.shared_bytes_per_block = static_cast<uint32_t>(props.sharedMemPerBlock);
      device.warp_size = count(props.warpSize);
      device.compute_capability_major = static_cast<uint16_t>(count(props.major));
      device.compute_capability_minor = static_cast<uint16_t>(count(props.minor));
      // ROCm's 16 bytes are the hex digits of ROCr's "GPU-<16 hex>" (text,
      // not binary): kept as they are, as ROCm SMI's sampler writes them
      // (launcher/gpu_metrics/rocm_smi_source.cpp).
      hipUUID uuid;
      if (hip.device_get_uuid != nullptr && hip.device_get_uuid(&uuid, ordinal) == hipSuccess)
        std::memcpy(device.uuid, uuid.bytes, sizeof device.uuid);
      define_device(device);
    }
  }
  return format::kAmdDeviceBase + ordinal;
}

namespace {

// Handles whose resources were asked: a fixed open-addressed table, so that
// every launch checks without a lock; when it is full, nothing more is asked.
constexpr size_t kAskedSlots = 8192;
std::atomic<uint64_t> g_asked[kAskedSlots];

bool first_ask(uint64_t handle) noexcept {
  if (handle == 0) return false;
  size_t slot = (handle >> 4) * 0x9E3779B97F4A7C15ull % kAskedSlots;
  for (size_t probe = 0; probe < kAskedSlots; ++probe, slot = (slot + 1) % kAskedSlots) {
    uint64_t seen = g_asked[slot].load(std::memory_order_acquire);
    if (seen == handle) return false;
    if (seen == 0 && g_asked[slot].compare_exchange_strong(seen, handle)) return true;
    if (seen == handle) return false;
  }
  return false;
}

}  // namespace

void describe_function_resources(uint64_t handle, bool module_function) noexcept {
  if (!first_ask(handle)) return;
  const HipServices& hip = hip_services();
  if (!hip.complete) return;
  const LastErrorGuard keep(hip);
  FunctionResources resources;
  auto store = [&](int value, uint32_t bit, uint32_t& field) {
    if (value < 0) return;
    field = static_cast<uint32_t>(value);
    resources.known |= bit;
  };
  if (!module_function && hip.func_get_attributes != nullptr) {
    hipFuncAttributes a{};
    if (hip.func_get_attributes(&a, reinterpret_cast<const void*>(handle)) != hipSuccess) return;
    store(a.numRegs, format::kFunctionRegisters, resources.registers_per_thread);
    store(static_cast<int>(a.sharedSizeBytes), format::kFunctionStaticShared, resources.static_shared_bytes);
    store(a.maxThreadsPerBlock, format::kFunctionMaxThreadsPerBlock, resources.max_threads_per_block);
    store(static_cast<int>(a.localSizeBytes), format::kFunctionLocalBytes, resources.local_bytes_per_thread);
  } else if (module_function && hip.func_get_attribute != nullptr) {
    auto ask = [&](hipFunction_attribute which, uint32_t bit, uint32_t& field) {
      int value = -1;
      if (hip.func_get_attribute(&value, which, reinterpret_cast<hipFunction_t>(handle)) == hipSuccess)
        store(value, bit, field);
    };
    ask(HIP_FUNC_ATTRIBUTE_NUM_REGS, format::kFunctionRegisters, resources.registers_per_thread);
    ask(HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, format::kFunctionStaticShared, resources.static_shared_bytes);
    ask(HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, format::kFunctionMaxThreadsPerBlock,
        resources.max_threads_per_block);
    ask(HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, format::kFunctionLocalBytes, resources.local_bytes_per_thread);
  }
  if (resources.known != 0) define_function_resources(handle, resources);
}

}  // namespace proflaunch::hip
