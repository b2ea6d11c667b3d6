#include "preload/hip/hip_rows.h"

#include "preload/hip/hip_library_frame.h"

namespace proflaunch::hip {

__thread HipLibraryFrame tls_hip_library_frame;

void open_library_frame(const void* stream, uint64_t correlation_id) noexcept {
  HipLibraryFrame& frame = tls_hip_library_frame;
  auto* hip_stream = static_cast<hipStream_t>(const_cast<void*>(stream));
  const HipTimingToken start = hip_timing_enabled() ? hip_timing_before(hip_stream, current_device(), false, false)
                                                    : HipTimingToken{};
  frame.entry = HipFrameEntry{hip_stream, correlation_id, start, false};
  frame.count = 1;
}

void close_library_frame() noexcept {
  HipLibraryFrame& frame = tls_hip_library_frame;
  if (frame.count == 0) return;
  frame.count = 0;
  if (!frame.entry.taken) hip_timing_release(frame.entry.start);
}

void classify(HipMemoryEnd& end) noexcept {
  const void* pointer = reinterpret_cast<const void*>(end.address);
  const HipServices& hip = hip_services();
  if (!hip.complete || pointer == nullptr) return;
  // An address HIP does not know fails the query (and would set the
  // thread's last error): asked only when there is none to lose.
  const LastErrorGuard keep(hip);
  if (!keep.clean_before()) return;
  hipPointerAttribute_t attributes{};
  if (hip.pointer_get_attributes(&attributes, pointer) != hipSuccess) {
    end.kind = format::MemoryKind::kPageableHost;
    return;
  }
  if (attributes.isManaged) {
    end.kind = format::MemoryKind::kManaged;
    end.device = recorded_device(attributes.device);
  } else if (attributes.memoryType == hipMemoryTypeDevice) {
    end.kind = format::MemoryKind::kDevice;
    end.device = recorded_device(attributes.device);
  } else if (attributes.memoryType == hipMemoryTypeArray) {
    end.kind = format::MemoryKind::kArray;
    end.device = recorded_device(attributes.device);
  } else {
    end.kind = format::MemoryKind::kPinnedHost;
  }
}

const void* symbol_device_address(const void* symbol, size_t offset) noexcept {
  const HipServices& hip = hip_services();
  if (!hip.complete || symbol == nullptr) return nullptr;
  const LastErrorGuard keep(hip);
  if (!keep.clean_before()) return nullptr;
  void* address = nullptr;
  if (hip.get_symbol_address(&address, symbol) != hipSuccess || address == nullptr) return nullptr;
  return static_cast<const char*>(address) + offset;
}

}  // namespace proflaunch::hip
