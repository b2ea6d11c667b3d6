#include "preload/hip/hip_rows.h"

namespace proflaunch::hip {

HipMemoryEnd classify(const void* pointer) noexcept {
  HipMemoryEnd end;
  end.address = reinterpret_cast<uint64_t>(pointer);
  const HipServices& hip = hip_services();
  if (!hip.complete || pointer == nullptr) return end;
  hipPointerAttribute_t attributes{};
  if (hip.pointer_get_attributes(&attributes, pointer) != hipSuccess) {
    end.kind = format::MemoryKind::kPageableHost;
    return end;
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
  return end;
}

format::CopyDirection HipCopyRow::direction_between(const HipMemoryEnd& src, const HipMemoryEnd& dst) noexcept {
  auto on_device = [](const HipMemoryEnd& e) {
    return e.kind == format::MemoryKind::kDevice || e.kind == format::MemoryKind::kManaged ||
           e.kind == format::MemoryKind::kArray;
  };
  auto on_host = [](const HipMemoryEnd& e) {
    return e.kind == format::MemoryKind::kPageableHost || e.kind == format::MemoryKind::kPinnedHost;
  };
  if (on_device(src) && on_device(dst))
    return src.device != dst.device ? format::CopyDirection::kPeer : format::CopyDirection::kDeviceToDevice;
  if (on_host(src) && on_device(dst)) return format::CopyDirection::kHostToDevice;
  if (on_device(src) && on_host(dst)) return format::CopyDirection::kDeviceToHost;
  if (on_host(src) && on_host(dst)) return format::CopyDirection::kHostToHost;
  return format::CopyDirection::kUnknown;
}

}  // namespace proflaunch::hip
