#include "preload/cuda/devices.h"

#include <cuda.h>

#include <atomic>
#include <cstring>

#include "preload/cuda/driver_services.h"
#include "preload/definitions.h"

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
  int sm_count = 0;
  if (driver.device_get_attribute != nullptr &&
      driver.device_get_attribute(&sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device) == CUDA_SUCCESS)
    description.multiprocessor_count = static_cast<uint32_t>(sm_count);
  size_t total = 0;
  if (driver.device_total_mem != nullptr && driver.device_total_mem(&total, device) == CUDA_SUCCESS)
    description.total_memory_bytes = total;
  CUuuid uuid{};
  if (driver.device_get_uuid != nullptr && driver.device_get_uuid(&uuid, device) == CUDA_SUCCESS)
    std::memcpy(description.uuid, uuid.bytes, sizeof description.uuid);
  define_device(description);
}

}  // namespace proflaunch::cuda
