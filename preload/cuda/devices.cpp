#include "preload/cuda/devices.h"

#include <cuda.h>

#include <atomic>
#include <cstring>

#include "preload/cuda/driver_services.h"
#include "preload/record/definitions.h"

namespace proflaunch::cuda {
namespace {

constexpr int kMaxDevices = 64;
std::atomic<uint64_t> g_defined{0};

}  // namespace

void ensure_device_defined(int device) noexcept {
  if (device < 0 || device >= kMaxDevices) return;
  const uint64_t bit = uint64_t{1} << device;
  if (g_defined.load(std::memory_order_acquire) & bit) return;
  if (g_defined.fetch_or(bit, std::memory_order_acq_rel) & bit) return;
  const DriverServices& driver = driver_services();
  DeviceDescription description;
  description.device = device;
  description.vendor = format::Vendor::kNvidia;
  char name[256] = {};
  if (driver.device_get_name != nullptr && driver.device_get_name(name, sizeof name - 1, device) == CUDA_SUCCESS)
    description.name = name;
  // Plain device queries: no stream, no context state, nothing a capture or
  // the runtime's last error could notice; a failed one leaves its field 0.
  auto attribute = [&](CUdevice_attribute which) -> uint32_t {
    int value = 0;
    if (driver.device_get_attribute == nullptr || driver.device_get_attribute(&value, which, device) != CUDA_SUCCESS ||
        value < 0)
      return 0;
    return static_cast<uint32_t>(value);
  };
  description.multiprocessor_count = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  description.max_threads_per_multiprocessor = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  description.max_blocks_per_multiprocessor = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  description.registers_per_multiprocessor = attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  description.registers_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  description.shared_bytes_per_multiprocessor = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  description.shared_bytes_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  description.shared_bytes_per_block_optin = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  description.reserved_shared_bytes_per_block = attribute(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
  description.warp_size = attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  description.compute_capability_major =
      static_cast<uint16_t>(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR));
  description.compute_capability_minor =
      static_cast<uint16_t>(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  size_t total = 0;
  if (driver.device_total_mem != nullptr && driver.device_total_mem(&total, device) == CUDA_SUCCESS)
    description.total_memory_bytes = total;
  CUuuid uuid{};
  if (driver.device_get_uuid != nullptr && driver.device_get_uuid(&uuid, device) == CUDA_SUCCESS)
    std::memcpy(description.uuid, uuid.bytes, sizeof description.uuid);
  define_device(description);
}

uint64_t defined_devices() noexcept { return g_defined.load(std::memory_order_acquire); }

}  // namespace proflaunch::cuda
