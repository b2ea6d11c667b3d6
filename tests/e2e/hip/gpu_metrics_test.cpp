// AMD device metrics end to end (launcher/gpu_metrics, ROCm SMI): a HIP
// program on the simulated HIP runtime, the launcher sampling the simulated
// librocm_smi64.so.1, which reads the state the runtime publishes per AMD
// device. The tests assert the samples against what the program did (its
// kernels' GPU time, its allocation) and that they land on the HIP process's
// GPU tracks, matched by UUID.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "formats/reader.h"
#include "tests/e2e/cuda/support/metrics_trace.h"
#include "tests/e2e/cuda/support/perfetto_json.h"
#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

using testing::run_process;

// ROCm SMI on the library path, no NVML.
Env with_rocm_smi(const TempDir& dir, Env more = {}) {
  return metrics_machine(dir, "SIMGPU_ROCM_SMI_DIR", std::move(more));
}
std::vector<std::string> load(std::vector<std::string> args) {
  return load_program("HIP_DEVICE_LOAD", std::move(args));
}

std::string uuid_text(const format::DeviceInfoRecord& device) {
  return std::string(reinterpret_cast<const char*>(device.uuid), 16);
}

constexpr uint64_t kEdgeMarginNs = 3'000'000;

TEST(AmdGpuMetrics, UtilizationAndMemoryFollowTheProgramOnItsGpuTracks) {
  TempDir dir;
  const std::string trace_path = dir / "u.trace";
  const ProcessResult run = run_process(
      traced(trace_path, load({"--hold-mib", "300", "--busy-ms", "500", "--idle-ms", "500", "--cycles", "2"}),
             // The kernels last exactly 10 ms, back to back, and a reading
             // counts only 3 ms inside one: at 20 or 50 Hz the readings can
             // lock onto the kernels' edges for a whole phase (2 of ~48 counted
             // once at 50 Hz). At 47 Hz each reading lands 1.3 ms further into
             // a kernel than the one before, so every phase is met.
             {"--gpu-metrics=47"}, with_rocm_smi(dir)));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const std::string marker = "device_load: holding ";
  const size_t at = run.out.find(marker);
  ASSERT_NE(at, std::string::npos) << run.out;
  const uint64_t program_bytes = std::stoull(run.out.substr(at + marker.size()));

  const MetricsTrace trace = read_metrics_trace(trace_path);
  ASSERT_NE(trace.sampler_section, 0u) << run.err;
  ASSERT_FALSE(trace.kernels.empty());
  ASSERT_EQ(trace.sampler_devices.size(), 2u) << "SIMGPU_DEVICE_COUNT's default: two AMD devices";
  for (const auto& [id, def] : trace.defs)
    EXPECT_EQ(def.record.source, uint8_t(format::GpuMetricSource::kRocmSmi)) << def.name;

  // The program's device 0 carries HIP's UUID: the 16 hex digits of ROCm
  // SMI's unique id of device 0; the sampler's device 0 has the same.
  ASSERT_EQ(trace.program_devices.size(), 1u);
  EXPECT_EQ(uuid_text(trace.program_devices[0]), "53494d414d440000");
  EXPECT_EQ(uuid_text(trace.sampler_devices.at(0)), "53494d414d440000");
  EXPECT_EQ(trace.sampler_devices.at(0).vendor, uint8_t(format::Vendor::kAmd));

  // ROCm SMI's busy percent is a reading of the moment (the simulator's:
  // 100 while a kernel runs): inside a kernel it is 100, away from every
  // kernel 0.
  const auto utilization = trace.of("gpu_utilization", 0);
  ASSERT_GE(utilization.size(), 20u);
  size_t busy = 0, idle = 0;
  for (const auto& sample : utilization) {
    if (trace.inside_kernel(sample.ns, kEdgeMarginNs)) {
      EXPECT_EQ(sample.value, 100u) << "at " << sample.ns << ", inside a kernel";
      ++busy;
    } else if (trace.far_from_kernels(sample.ns, kEdgeMarginNs)) {
      EXPECT_EQ(sample.value, 0u) << "at " << sample.ns << ", no kernel near";
      ++idle;
    }
  }
  // What was compared, should it fail.
  std::string seen = std::to_string(trace.kernels.size()) + " kernels from " +
                     std::to_string(trace.kernels.front().first) + " to " + std::to_string(trace.kernels.back().second) +
                     "; samples:";
  for (const auto& sample : utilization) seen += " " + std::to_string(sample.ns) + "=" + std::to_string(sample.value);
  EXPECT_GE(busy, 4u) << seen;
  EXPECT_GE(idle, 4u) << seen;
  for (const auto& sample : trace.of("gpu_utilization", 1)) EXPECT_EQ(sample.value, 0u) << "device 1 did nothing";

  // Memory: the device held exactly the program's allocation (nothing else
  // runs on it), and the total is the device's.
  std::set<uint64_t> used;
  for (const auto& sample : trace.of("memory_used", 0)) used.insert(sample.value);
  EXPECT_TRUE(used.count(program_bytes)) << "program " << program_bytes << "; max seen "
                                         << (used.empty() ? 0 : *used.rbegin());
  ASSERT_FALSE(trace.of("memory_total", 0).empty());
  EXPECT_EQ(trace.of("memory_total", 0).front().value, 16384ull << 20);
  // Units: power in mW, temperature in C, clocks in MHz.
  std::set<uint64_t> power, temperature, clock;
  for (const auto& s : trace.of("power", 0)) power.insert(s.value);
  for (const auto& s : trace.of("temperature", 0)) temperature.insert(s.value);
  for (const auto& s : trace.of("sm_clock", 0)) clock.insert(s.value);
  EXPECT_TRUE(power.count(255'000) && power.count(42'000)) << "busy and idle power, mW";
  EXPECT_TRUE(temperature.count(62) && temperature.count(35));
  EXPECT_TRUE(clock.count(1700) && clock.count(500));

  // In the timeline the counters are on the HIP process's GPU process.
  const std::string json_path = dir / "u.json";
  const ProcessResult convert = run_proftrace({"convert", trace_path, "-o", json_path});
  ASSERT_EQ(convert.status, 0) << convert.err;
  PerfettoJson json;
  std::string error;
  ASSERT_TRUE(load_perfetto_json(json_path, &json, &error)) << error;
  std::set<uint32_t> kernel_pids, utilization_pids, memory_pids;
  for (const JsonValue* slice : json.slices("kernel")) kernel_pids.insert(uint32_t((*slice)["pid"].as_uint()));
  for (const JsonValue* event : json.events) {
    if ((*event)["ph"].str() != "C") continue;
    if ((*event)["name"].str() == "GPU utilization") utilization_pids.insert(uint32_t((*event)["pid"].as_uint()));
    if ((*event)["name"].str() == "Memory used") memory_pids.insert(uint32_t((*event)["pid"].as_uint()));
  }
  ASSERT_EQ(kernel_pids.size(), 1u);
  EXPECT_TRUE(utilization_pids.count(*kernel_pids.begin())) << "the counters are on the kernels' GPU process";
  EXPECT_EQ(utilization_pids.size(), 2u) << "device 1 has a GPU process of its own, named by its index";
  EXPECT_TRUE(memory_pids.count(*kernel_pids.begin()));
  for (uint32_t pid : utilization_pids) {
    if (pid == *kernel_pids.begin()) continue;
    EXPECT_EQ(json.process_names[pid].rfind("GPU (ROCm SMI 1, used by no traced process)", 0), 0u)
        << json.process_names[pid];
  }
  const ProcessResult stats = run_proftrace({"stats", "--section", "gpu-metrics", trace_path});
  ASSERT_EQ(stats.status, 0) << stats.err;
  EXPECT_NE(stats.out.find("gpu_utilization"), std::string::npos) << stats.out;
}

TEST(AmdGpuMetrics, HipVisibleDevicesSamplesOnlyThatDevice) {
  TempDir dir;
  const std::string trace_path = dir / "v.trace";
  const ProcessResult run = run_process(traced(trace_path, load({"--busy-ms", "300", "--idle-ms", "100", "--cycles", "1"}),
                                               {"--gpu-metrics=20"},
                                               with_rocm_smi(dir, {{"HIP_VISIBLE_DEVICES", "1"}})));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const MetricsTrace trace = read_metrics_trace(trace_path);
  ASSERT_EQ(trace.sampler_devices.size(), 1u);
  ASSERT_EQ(trace.program_devices.size(), 1u);
  const auto& sampled = trace.sampler_devices.begin()->second;
  EXPECT_EQ(uuid_text(sampled), "53494d414d440001") << "ROCm SMI's device 1";
  EXPECT_EQ(uuid_text(trace.program_devices[0]), uuid_text(sampled)) << "the program's device 0 is that device";
  uint64_t peak = 0;
  for (const auto& sample : trace.of("gpu_utilization", sampled.device)) peak = std::max(peak, sample.value);
  EXPECT_EQ(peak, 100u) << "the program's work shows on the visible device";
}

// The firmware's throttle_status bits (their meaning is the ASIC's) set
// while the program's kernels run: the time they held counts as throttled,
// and the device-state rule names the device; the same run unthrottled is
// clean.
TEST(AmdGpuMetrics, AThrottledDeviceIsFlaggedByTheRecommendation) {
  TempDir dir;
  const std::string trace_path = dir / "t.trace";
  const std::vector<std::string> program = load({"--busy-ms", "400", "--idle-ms", "100", "--cycles", "1"});
  ASSERT_TRUE(run_process(traced(trace_path, program, {"--gpu-metrics=20"},
                                 with_rocm_smi(dir, {{"SIMGPU_ROCM_SMI_THROTTLE", "0=1"}})))
                  .exited_with(0));
  const MetricsTrace trace = read_metrics_trace(trace_path);
  // A gauge is written when it changes: set while the kernels run, clear after.
  std::vector<uint64_t> values;
  for (const auto& sample : trace.of("throttle_status", 0)) values.push_back(sample.value);
  EXPECT_NE(std::find(values.begin(), values.end(), 1u), values.end()) << "the bits are read while the kernels run";
  EXPECT_EQ(values.empty() ? 1u : values.back(), 0u) << "and clear once they are done";
  const ProcessResult stats =
      run_proftrace({"stats", "--section", "gpu-metrics", "--section", "recommendations", trace_path});
  ASSERT_EQ(stats.status, 0) << stats.err;
  EXPECT_NE(stats.out.find("firmware throttle status (ASIC-specific bits)"), std::string::npos) << stats.out;
  const size_t rule = stats.out.find("device-state");
  ASSERT_NE(rule, std::string::npos) << stats.out;
  const std::string row = stats.out.substr(rule, stats.out.find('\n', rule) - rule);
  EXPECT_EQ(row.find("nothing found"), std::string::npos) << row;
  EXPECT_NE(row.find("throttled"), std::string::npos) << row;

  TempDir clean_dir;
  const std::string clean_path = clean_dir / "c.trace";
  ASSERT_TRUE(run_process(traced(clean_path, program, {"--gpu-metrics=20"}, with_rocm_smi(clean_dir))).exited_with(0));
  const ProcessResult clean = run_proftrace({"stats", "--section", "recommendations", clean_path});
  const size_t clean_rule = clean.out.find("device-state");
  ASSERT_NE(clean_rule, std::string::npos) << clean.out;
  EXPECT_NE(clean.out.substr(clean_rule, 40).find("nothing found"), std::string::npos) << clean.out;
}

TEST(AmdGpuMetrics, AMetricLeftOutOnceWithTheLibrarysReason) {
  TempDir dir;
  const std::string trace_path = dir / "n.trace";
  const ProcessResult run = run_process(
      traced(trace_path, load({"--busy-ms", "200", "--idle-ms", "200", "--cycles", "1"}), {"--gpu-metrics=20", "-v"},
             with_rocm_smi(dir, {{"SIMGPU_ROCM_SMI_UNSUPPORTED", "rsmi_dev_power_ave_get"},
                                 {"SIMGPU_ROCM_SMI_PERMISSION", "rsmi_dev_power_cap_get@1"}})));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const MetricsTrace trace = read_metrics_trace(trace_path);
  ASSERT_EQ(trace.sampler_devices.size(), 2u);
  for (const auto& [device, info] : trace.sampler_devices) {
    std::map<std::string, std::vector<const MetricsTrace::Def*>> by_name;
    for (const auto& [id, def] : trace.defs)
      if (def.record.device == device) by_name[def.name].push_back(&def);
    ASSERT_EQ(by_name["power"].size(), 1u) << "device " << device;
    const MetricsTrace::Def& power = *by_name["power"].front();
    EXPECT_EQ(power.reason.rfind("RSMI_STATUS_NOT_SUPPORTED", 0), 0u) << power.reason;
    EXPECT_EQ(trace.samples.count(power.record.metric), 0u) << "samples of an unsupported metric";
    ASSERT_EQ(by_name["power_limit"].size(), 1u);
    if (device == 1)
      EXPECT_EQ(by_name["power_limit"].front()->reason.rfind("RSMI_STATUS_PERMISSION", 0), 0u);
    else
      EXPECT_FALSE(trace.of("power_limit", device).empty());
    EXPECT_FALSE(trace.of("temperature", device).empty());
  }
  size_t said = 0;
  for (size_t at = run.err.find("left out power on AMD GPU"); at != std::string::npos;
       at = run.err.find("left out power on AMD GPU", at + 1))
    ++said;
  EXPECT_EQ(said, 2u) << "once per device, with -v: " << run.err;
  const ProcessResult stats = run_proftrace({"stats", "--section", "gpu-metrics", trace_path});
  EXPECT_NE(stats.out.find("power left out: RSMI_STATUS_NOT_SUPPORTED"), std::string::npos) << stats.out;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(AmdGpuMetrics, WithoutRocmSmiTheRunGoesOn) {
  TempDir dir;
  const std::vector<std::string> program = load({"--busy-ms", "100", "--idle-ms", "50", "--cycles", "1"});
  // Neither library: not on the path (the machine's own librocm_smi64, if
  // installed, finds no amdgpu driver here). One line, after the summary.
  Env env = with_rocm_smi(dir);
  env[0].second = build_path("SIMGPU_LIBRARY_PATH");
  std::vector<std::string> command = {build_path("PROFLAUNCH_EXE"), "-o", dir / "x.trace", "--"};
  command.insert(command.end(), program.begin(), program.end());
  const ProcessResult run = run_process(untraced(command, env));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(count(run.err, "device metrics off"), 1u) << run.err;
  EXPECT_EQ(count(run.err, "device metrics off: no NVML (libnvidia-ml.so.1: cannot open shared object file"), 1u)
      << run.err;
  const bool absent = count(run.err, "no ROCm SMI (librocm_smi64.so.1: cannot open shared object file") == 1;
  const bool no_driver = count(run.err, "no ROCm SMI (rsmi_init failed: ") == 1;
  EXPECT_TRUE(absent || no_driver) << run.err;
  // What the machine's real library prints when it finds no driver is in
  // that line, not on lines of its own.
  // (the program itself writes nothing to stderr).
  for (size_t line = 0; line < run.err.size(); line = run.err.find('\n', line) + 1) {
    EXPECT_EQ(run.err.compare(line, 12, "proflaunch: "), 0) << run.err.substr(line, run.err.find('\n', line) - line);
    if (run.err.find('\n', line) == std::string::npos) break;
  }
  EXPECT_LT(run.err.find("x.trace: 1 process"), run.err.find("device metrics off")) << run.err;
  const MetricsTrace trace = read_metrics_trace(dir / "x.trace");
  EXPECT_EQ(trace.sampler_section, 0u);
  EXPECT_FALSE(trace.kernels.empty()) << "the program's trace is whole";

  // The simulated ROCm SMI failing to start: its reason in the line.
  const ProcessResult failed = run_process(
      traced(dir / "f.trace", program, {"--gpu-metrics=10"}, with_rocm_smi(dir, {{"SIMGPU_ROCM_SMI_INIT_ERROR", "8"}})));
  ASSERT_TRUE(failed.exited_with(0)) << failed.describe();
  EXPECT_EQ(count(failed.err, "no ROCm SMI (rsmi_init failed: RSMI_STATUS_INIT_ERROR"), 1u) << failed.err;
  EXPECT_FALSE(read_metrics_trace(dir / "f.trace").kernels.empty());

  // NVML there, ROCm SMI not: nothing said about ROCm SMI, NVIDIA's devices sampled.
  Env nvml_only = with_rocm_smi(dir);
  nvml_only[0].second = build_path("SIMGPU_LIBRARY_PATH") + ":" + build_path("SIMGPU_NVML_DIR");
  const ProcessResult nvml = run_process(traced(dir / "n.trace", program, {"--gpu-metrics=10"}, nvml_only));
  ASSERT_TRUE(nvml.exited_with(0)) << nvml.describe();
  EXPECT_EQ(nvml.err.find("ROCm SMI"), std::string::npos) << nvml.err;
  const MetricsTrace sampled = read_metrics_trace(dir / "n.trace");
  ASSERT_FALSE(sampled.defs.empty());
  for (const auto& [id, def] : sampled.defs)
    EXPECT_EQ(def.record.source, uint8_t(format::GpuMetricSource::kNvml)) << def.name;
}

}  // namespace
}  // namespace proflaunch::e2e
