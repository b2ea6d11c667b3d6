// The device metrics of a trace as the e2e tests read them: the metric
// definitions and samples of either the launcher's device sampler (NVML,
// ROCm SMI) or the traced program's own section (CUPTI PM sampling), the
// devices each side saw, and the program's GPU work to compare them with.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "formats/records.h"
#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {

// Whose definitions and samples `defs` and `samples` hold.
enum class MetricsOf { kSampler, kProgram };

struct MetricsTrace {
  struct Def {
    format::GpuMetricDefRecord record;
    std::string name, unit, reason;
  };
  struct Sample {
    uint64_t ns, value;
  };
  uint64_t sampler_section = 0;  // 0: the launcher sampled nothing
  uint64_t program_section = 0;  // the (last) traced process's
  std::map<int32_t, format::DeviceInfoRecord> sampler_devices;
  std::vector<format::DeviceInfoRecord> program_devices;
  std::map<uint32_t, Def> defs;                     // the chosen side's, by metric
  std::map<uint32_t, std::vector<Sample>> samples;  // the chosen side's, by metric
  uint64_t other_samples = 0;                       // how many the other side wrote
  std::vector<std::pair<uint64_t, uint64_t>> kernels;  // the program's kernels' GPU intervals, sorted
  std::vector<format::GpuActivityRecord> activity;
  std::vector<format::GpuTimingInfoRecord> timing_info;

  // The metric `name` of `device` (-1: of any device).
  const Def* def(const std::string& name, int32_t device = -1) const;
  std::vector<Sample> of(const std::string& name, int32_t device = -1) const;
  uint64_t sample_count() const;
  // The union of the kernels' time inside [from, to).
  uint64_t busy_ns(uint64_t from, uint64_t to) const;
  // `ns` at least `margin_ns` inside a kernel / that far from every kernel.
  bool inside_kernel(uint64_t ns, uint64_t margin_ns) const;
  bool far_from_kernels(uint64_t ns, uint64_t margin_ns) const;
};

// Reads `path` (a joined trace); a read error is a test failure.
MetricsTrace read_metrics_trace(const std::string& path, MetricsOf of = MetricsOf::kSampler);

using Env = std::vector<std::pair<std::string, std::string>>;

// The simulated machine with one management library's directory (the build
// path variable `library_dir`: SIMGPU_NVML_DIR, SIMGPU_ROCM_SMI_DIR) on the
// library path, the devices' state in the test's own directory (other
// tests' programs are not on its devices), kernels of 10 ms; then `more`.
Env metrics_machine(const TempDir& dir, const char* library_dir, Env more = {});

// The load program (the build path variable `program`: DEVICE_LOAD,
// HIP_DEVICE_LOAD) with `args`.
std::vector<std::string> load_program(const char* program, std::vector<std::string> args);

}  // namespace proflaunch::e2e
