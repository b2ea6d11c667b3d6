#include "amd_devices.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "simgpu_device_state.h"
#include "tests/simgpu/driver/src/device_telemetry.h"

namespace simhip {
namespace {

constexpr int kMaxDevices = 64;
int g_physical[kMaxDevices];
int g_visible_count = 0;

// One visibility list applied to `devices` (physical indices): its entries
// are indices into `devices` or UUIDs ("GPU-<hex>", matched as ROCclr does:
// the device whose UUID text contains the entry). The list ends at the first
// entry that matches nothing or repeats one, as CUDA's does.
std::vector<int> apply(const char* text, const std::vector<int>& devices) {
  if (text == nullptr) return devices;
  std::vector<int> kept;
  const std::string list = text;
  size_t at = 0;
  while (at < list.size()) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    const std::string entry = list.substr(at, comma - at);
    at = comma + 1;
    int found = -1;
    if (!entry.empty() && entry.find_first_not_of("0123456789") == std::string::npos) {
      const unsigned long index = std::strtoul(entry.c_str(), nullptr, 10);
      if (index < devices.size()) found = devices[index];
    } else if (entry.rfind("GPU-", 0) == 0) {
      for (int physical : devices)
        if (amd_uuid_text(physical).find(entry) != std::string::npos) found = physical;
    }
    bool repeated = false;
    for (int seen : kept) repeated |= seen == found;
    if (found < 0 || repeated) break;
    kept.push_back(found);
  }
  return kept;
}

// ROCr applies ROCR_VISIBLE_DEVICES to the machine's devices; HIP then
// applies HIP_VISIBLE_DEVICES (or, unset, CUDA_VISIBLE_DEVICES) to what ROCr
// left (ROCm's GPU isolation documentation).
void visible_amd_devices(int device_count, int* physical, int* count) {
  std::vector<int> devices;
  for (int i = 0; i < device_count; ++i) devices.push_back(i);
  devices = apply(std::getenv("ROCR_VISIBLE_DEVICES"), devices);
  const char* hip = std::getenv("HIP_VISIBLE_DEVICES");
  devices = apply(hip != nullptr ? hip : std::getenv("CUDA_VISIBLE_DEVICES"), devices);
  *count = 0;
  for (int device : devices) {
    if (*count >= kMaxDevices) break;
    physical[*count] = device;
    g_physical[*count] = device;
    ++*count;
  }
  g_visible_count = *count;
}

}  // namespace

void install_amd_personality() noexcept {
  simgpu::engine_personality().state_file_prefix = simgpu::kAmdStateFilePrefix;
  simgpu::engine_personality().visible_devices = visible_amd_devices;
}

int physical_device(int ordinal) noexcept {
  return ordinal >= 0 && ordinal < g_visible_count ? g_physical[ordinal] : -1;
}

std::string amd_uuid_text(int physical) {
  char text[32];
  std::snprintf(text, sizeof text, "GPU-%016" PRIx64, simgpu::amd_unique_id(uint32_t(physical)));
  return text;
}

}  // namespace simhip
