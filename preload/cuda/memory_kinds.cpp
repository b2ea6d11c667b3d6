#include "preload/cuda/memory_kinds.h"

#include "preload/cuda/driver_services.h"

namespace proflaunch::cuda {
namespace {

bool is_host(format::MemoryKind kind) {
  return kind == format::MemoryKind::kPageableHost || kind == format::MemoryKind::kPinnedHost;
}

}  // namespace

format::MemoryKind host_memory_kind(const void* pointer) noexcept {
  const DriverServices& driver = driver_services();
  unsigned int type = 0;
  if (driver.pointer_get_attribute == nullptr) return format::MemoryKind::kUnknown;
  if (driver.pointer_get_attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                   reinterpret_cast<CUdeviceptr>(pointer)) != CUDA_SUCCESS)
    return format::MemoryKind::kPageableHost;  // not known to the driver
  return type == CU_MEMORYTYPE_HOST ? format::MemoryKind::kPinnedHost : format::MemoryKind::kUnknown;
}

format::MemoryKind any_memory_kind(CUdeviceptr pointer) noexcept {
  const DriverServices& driver = driver_services();
  if (driver.pointer_get_attribute == nullptr) return format::MemoryKind::kUnknown;
  unsigned int type = 0;
  if (driver.pointer_get_attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, pointer) != CUDA_SUCCESS)
    return format::MemoryKind::kPageableHost;
  int managed = 0;
  if (driver.pointer_get_attribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, pointer) == CUDA_SUCCESS &&
      managed)
    return format::MemoryKind::kManaged;
  switch (type) {
    case CU_MEMORYTYPE_HOST: return format::MemoryKind::kPinnedHost;
    case CU_MEMORYTYPE_DEVICE: return format::MemoryKind::kDevice;
    case CU_MEMORYTYPE_ARRAY: return format::MemoryKind::kArray;
    case CU_MEMORYTYPE_UNIFIED: return format::MemoryKind::kManaged;
    default: return format::MemoryKind::kUnknown;
  }
}

format::CopyDirection direction_between(format::MemoryKind src, format::MemoryKind dst) noexcept {
  if (src == format::MemoryKind::kUnknown || dst == format::MemoryKind::kUnknown)
    return format::CopyDirection::kUnknown;
  if (is_host(src)) return is_host(dst) ? format::CopyDirection::kHostToHost : format::CopyDirection::kHostToDevice;
  return is_host(dst) ? format::CopyDirection::kDeviceToHost : format::CopyDirection::kDeviceToDevice;
}

}  // namespace proflaunch::cuda
