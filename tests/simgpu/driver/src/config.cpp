#include "config.h"

#include <cerrno>
#include <cstdlib>

#include <unistd.h>

namespace simgpu {
namespace {

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return (value && *value) ? value : nullptr;
}

bool parse_integer(const char* name, long long min, long long max, long long& out, std::string& error) {
  const char* text = env(name);
  if (!text) return true;
  char* end = nullptr;
  errno = 0;
  long long value = std::strtoll(text, &end, 10);
  if (errno || *end || value < min || value > max) {
    error = std::string(name) + "='" + text + "' is not an integer in [" + std::to_string(min) + ", " +
            std::to_string(max) + "]";
    return false;
  }
  out = value;
  return true;
}

bool parse_bandwidth(const char* name, double& bytes_per_ns, std::string& error) {
  const char* text = env(name);
  if (!text) return true;
  char* end = nullptr;
  double value = std::strtod(text, &end);
  if (*end || !(value > 0.0) || value > 1e7) {
    error = std::string(name) + "='" + text + "' is not a positive bandwidth in GB/s";
    return false;
  }
  bytes_per_ns = value;
  return true;
}

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_bytes = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_bytes <= 0) return 16ull << 30;
  return uint64_t(pages) * uint64_t(page_bytes);
}

bool parse_compute_capability(DriverConfig& config, std::string& error) {
  const char* text = env("SIMGPU_COMPUTE_CAPABILITY");
  if (!text) return true;
  int major = 0, minor = 0;
  char trailing = 0;
  if (std::sscanf(text, "%d.%d%c", &major, &minor, &trailing) != 2 || major < 1 || major > 99 || minor < 0 ||
      minor > 9) {
    error = std::string("SIMGPU_COMPUTE_CAPABILITY='") + text + "' is not like 9.0";
    return false;
  }
  config.cc_major = major;
  config.cc_minor = minor;
  return true;
}

}  // namespace

bool load_config_from_environment(DriverConfig& config, std::string& error) {
  long long value = 0;
  value = config.device_count;
  if (!parse_integer("SIMGPU_DEVICE_COUNT", 0, 64, value, error)) return false;
  config.device_count = int(value);

  value = (long long)(config.device_memory_bytes >> 20);
  if (!parse_integer("SIMGPU_DEVICE_MEMORY_MIB", 1, 1ll << 30, value, error)) return false;
  config.device_memory_bytes = uint64_t(value) << 20;

  value = (long long)(physical_memory_bytes() >> 20);
  if (!parse_integer("SIMGPU_PINNED_MEMORY_MIB", 1, 1ll << 30, value, error)) return false;
  config.pinned_memory_bytes = uint64_t(value) << 20;

  value = config.sm_count;
  if (!parse_integer("SIMGPU_SM_COUNT", 1, 100000, value, error)) return false;
  config.sm_count = int(value);

  value = config.copy_latency_ns;
  if (!parse_integer("SIMGPU_COPY_LATENCY_NS", 0, 10'000'000'000, value, error)) return false;
  config.copy_latency_ns = value;

  value = config.launch_latency_ns;
  if (!parse_integer("SIMGPU_LAUNCH_LATENCY_NS", 0, 10'000'000'000, value, error)) return false;
  config.launch_latency_ns = value;

  value = config.module_load_ns;
  if (!parse_integer("SIMGPU_MODULE_LOAD_NS", 0, 10'000'000'000, value, error)) return false;
  config.module_load_ns = value;

  value = config.event_clock_ppm;
  if (!parse_integer("SIMGPU_EVENT_CLOCK_PPM", -100'000, 100'000, value, error)) return false;
  config.event_clock_ppm = value;
  // The real driver's knob; a value it does not know leaves the default.
  if (const char* loading = env("CUDA_MODULE_LOADING")) {
    if (std::string(loading) == "EAGER") config.lazy_loading = false;
    if (std::string(loading) == "LAZY") config.lazy_loading = true;
  }

  if (const char* name = env("SIMGPU_DEVICE_NAME")) config.device_name = name;
  if (!parse_compute_capability(config, error)) return false;
  if (!parse_bandwidth("SIMGPU_H2D_GBPS", config.h2d_bytes_per_ns, error)) return false;
  if (!parse_bandwidth("SIMGPU_D2H_GBPS", config.d2h_bytes_per_ns, error)) return false;
  if (!parse_bandwidth("SIMGPU_D2D_GBPS", config.d2d_bytes_per_ns, error)) return false;
  if (!parse_bandwidth("SIMGPU_P2P_GBPS", config.p2p_bytes_per_ns, error)) return false;
  if (const char* costs = env("SIMGPU_KERNEL_COSTS")) config.kernel_costs = costs;
  if (const char* faults = env("SIMGPU_FAULT_KERNELS")) config.fault_kernels = faults;
  if (const char* jit = env("CUDA_DISABLE_PTX_JIT")) config.ptx_jit_enabled = std::string(jit) != "1";
  return true;
}

}  // namespace simgpu
