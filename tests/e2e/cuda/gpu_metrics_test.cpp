// Device metrics end to end (launcher/gpu_metrics): the launcher samples the
// simulated NVML, which reads the state every simulated driver publishes;
// the samples land in the trace, in convert's tracks, in stats and SQL.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <cstdlib>
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

Env with_nvml(const TempDir& dir, Env more = {}) {
  return metrics_machine(dir, "SIMGPU_NVML_DIR", std::move(more));
}
std::vector<std::string> load(std::vector<std::string> args = {}) {
  return load_program("DEVICE_LOAD", std::move(args));
}

TEST(GpuMetrics, UtilizationFollowsTheModelledBusyTimeOfEachSamplingWindow) {
  TempDir dir;
  const std::string trace_path = dir / "u.trace";
  const ProcessResult run = run_process(
      traced(trace_path, load({"--busy-ms", "500", "--idle-ms", "500", "--cycles", "2"}), {"--gpu-metrics=20"},
             with_nvml(dir)));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const MetricsTrace trace = read_metrics_trace(trace_path);
  ASSERT_NE(trace.sampler_section, 0u) << run.err;
  ASSERT_FALSE(trace.kernels.empty());
  // The program uses device 0; NVML's device 0 is the same device.
  const auto utilization = trace.of("gpu_utilization", 0);
  ASSERT_GE(utilization.size(), 20u);
  // Each reading covers the time since the one before (a rate is written at
  // every reading): it is the kernels' share of that window, within what
  // the few microseconds between NVML's clock and the sample's time allow.
  size_t busy_windows = 0, idle_windows = 0;
  for (size_t i = 1; i < utilization.size(); ++i) {
    const uint64_t from = utilization[i - 1].ns, to = utilization[i].ns;
    ASSERT_GT(to, from);
    const double expected = 100.0 * double(trace.busy_ns(from, to)) / double(to - from);
    EXPECT_NEAR(double(utilization[i].value), expected, 3.0 + 100.0 * 2e6 / double(to - from))
        << "window " << i << " [" << from << ", " << to << ")";
    if (utilization[i].value >= 90) ++busy_windows;
    if (utilization[i].value == 0 && expected == 0) ++idle_windows;
  }
  // Both phases were seen, so the comparison above was not vacuous.
  EXPECT_GE(busy_windows, 4u);
  EXPECT_GE(idle_windows, 4u);

  // The same samples on the device's GPU process in convert's timeline, and
  // in stats.
  const ProcessResult stats = run_proftrace({"stats", "--section", "gpu-metrics", trace_path});
  ASSERT_EQ(stats.status, 0) << stats.err;
  EXPECT_NE(stats.out.find("gpu_utilization"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("GPU 0 (pid "), std::string::npos) << stats.out;
}

TEST(GpuMetrics, MemoryUsedIsWhatTheProgramHoldsPlusAnotherProcess) {
  TempDir dir;
  const Env env = with_nvml(dir);
  // Another process on the same device, holding 1 GiB for the whole run.
  RunningProcess other(untraced(load({"--hold-mib", "1024", "--hold-seconds", "30"}), env));
  ASSERT_TRUE(other.wait_for_line("device_load: ready", 20000));

  const std::string trace_path = dir / "m.trace";
  const ProcessResult run =
      run_process(traced(trace_path, load({"--hold-mib", "300", "--busy-ms", "300", "--idle-ms", "300"}),
                         {"--gpu-metrics=20"}, env));
  other.send(SIGKILL);
  const ProcessResult other_result = other.wait();
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const std::string marker = "device_load: holding ";
  const size_t other_at = other_result.out.find(marker);
  ASSERT_NE(other_at, std::string::npos) << other_result.out;
  const uint64_t other_bytes = std::stoull(other_result.out.substr(other_at + marker.size()));
  const size_t at = run.out.find(marker);
  ASSERT_NE(at, std::string::npos) << run.out;
  const uint64_t program_bytes = std::stoull(run.out.substr(at + marker.size()));

  const MetricsTrace trace = read_metrics_trace(trace_path);
  const auto used = trace.of("memory_used", 0);
  ASSERT_FALSE(used.empty());
  std::set<uint64_t> values;
  for (const auto& sample : used) values.insert(sample.value);
  // While the program ran its phases it held program_bytes: the device then
  // held that and the other process's memory, exactly.
  EXPECT_TRUE(values.count(program_bytes + other_bytes))
      << "program " << program_bytes << " + other " << other_bytes << "; max seen " << *values.rbegin();
  EXPECT_LE(*values.rbegin(), program_bytes + other_bytes);
  const auto total = trace.of("memory_total", 0);
  ASSERT_FALSE(total.empty());
  EXPECT_EQ(total.front().value, 16384ull << 20);
}

TEST(GpuMetrics, AThrottledDeviceIsFlaggedByTheRecommendation) {
  TempDir dir;
  const std::string trace_path = dir / "t.trace";
  const ProcessResult run = run_process(traced(trace_path, load({"--busy-ms", "400", "--idle-ms", "100"}),
                                               {"--gpu-metrics=20"},
                                               with_nvml(dir, {{"SIMGPU_NVML_THROTTLE", "0=power"}})));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const ProcessResult stats = run_proftrace({"stats", "--section", "gpu-metrics", "--section", "recommendations",
                                             trace_path});
  ASSERT_EQ(stats.status, 0) << stats.err;
  EXPECT_NE(stats.out.find("power cap (software)"), std::string::npos) << stats.out;
  const size_t rule = stats.out.find("device-state");
  ASSERT_NE(rule, std::string::npos) << stats.out;
  const std::string row = stats.out.substr(rule, stats.out.find('\n', rule) - rule);
  EXPECT_NE(row.find("found"), std::string::npos) << row;
  EXPECT_EQ(row.find("nothing found"), std::string::npos) << row;
  EXPECT_NE(row.find("throttled"), std::string::npos) << row;
  // The report carries the same table (its overview shows it beside the GPU activity).
  const ProcessResult report = run_proftrace({"report", trace_path, "-o", dir / "t.html"});
  ASSERT_EQ(report.status, 0) << report.err;
  std::ifstream page(dir / "t.html");
  const std::string html((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("\"section\": \"gpu-metrics\""), std::string::npos);
  EXPECT_NE(html.find("tableOf('gpu-metrics', 'Device metrics:')"), std::string::npos);

  // The same program on a device that is not throttled: the rule is clean.
  TempDir clean_dir;
  const std::string clean_path = clean_dir / "c.trace";
  ASSERT_TRUE(run_process(traced(clean_path, load({"--busy-ms", "400", "--idle-ms", "100"}), {"--gpu-metrics=20"},
                                 with_nvml(clean_dir)))
                  .exited_with(0));
  const ProcessResult clean = run_proftrace({"stats", "--section", "recommendations", clean_path});
  const size_t clean_rule = clean.out.find("device-state");
  ASSERT_NE(clean_rule, std::string::npos) << clean.out;
  EXPECT_NE(clean.out.substr(clean_rule, 40).find("nothing found"), std::string::npos) << clean.out;
}

TEST(GpuMetrics, AnUnsupportedMetricIsLeftOutOnceWithItsReason) {
  TempDir dir;
  const std::string trace_path = dir / "n.trace";
  const ProcessResult run =
      run_process(traced(trace_path, load({"--busy-ms", "200", "--idle-ms", "200"}), {"--gpu-metrics=20"},
                         with_nvml(dir, {{"SIMGPU_NVML_UNSUPPORTED", "nvmlDeviceGetPowerUsage"}})));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const MetricsTrace trace = read_metrics_trace(trace_path);
  ASSERT_FALSE(trace.sampler_devices.empty());
  for (const auto& [device, info] : trace.sampler_devices) {
    size_t power_defs = 0;
    for (const auto& [id, def] : trace.defs)
      if (def.record.device == device && def.name == "power") {
        ++power_defs;
        EXPECT_EQ(def.reason, "Not Supported");
        EXPECT_TRUE(trace.samples.count(id) == 0) << "samples of an unsupported metric";
      }
    EXPECT_EQ(power_defs, 1u) << "device " << device;
    // The others are there.
    EXPECT_FALSE(trace.of("power_limit", device).empty());
  }
  const ProcessResult stats = run_proftrace({"stats", "--section", "gpu-metrics", trace_path});
  EXPECT_NE(stats.out.find("power left out: Not Supported"), std::string::npos) << stats.out;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(GpuMetrics, WithoutNvmlOneLineSaysSoAndTheTraceIsWhole) {
  TempDir dir;
  Env env = with_nvml(dir);
  env[0].second = build_path("SIMGPU_LIBRARY_PATH");  // no libnvidia-ml.so.1
  const std::vector<std::string> program = load({"--busy-ms", "100", "--idle-ms", "50", "--cycles", "1"});
  // Without -q: the summary, then the one line.
  std::vector<std::string> command = {build_path("PROFLAUNCH_EXE"), "-o", dir / "x.trace", "--"};
  command.insert(command.end(), program.begin(), program.end());
  const ProcessResult run = run_process(untraced(command, env));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(count(run.err, "device metrics off"), 1u) << run.err;
  EXPECT_EQ(count(run.err, "device metrics off: no NVML (libnvidia-ml.so.1: cannot open shared object file"), 1u)
      << run.err;
  EXPECT_LT(run.err.find("x.trace: 1 process"), run.err.find("device metrics off")) << run.err;
  const MetricsTrace trace = read_metrics_trace(dir / "x.trace");
  EXPECT_EQ(trace.sampler_section, 0u);
  EXPECT_FALSE(trace.kernels.empty());
  EXPECT_FALSE(trace.program_devices.empty());
  // The rest of the trace is whole: every launch with its GPU time.
  const CudaTrace whole = load_trace_or_fail(dir / "x.trace");
  ASSERT_EQ(whole.images.size(), 1u);
  const auto launches = whole.images[0].launches();
  ASSERT_FALSE(launches.empty());
  for (const Operation* launch : launches) EXPECT_EQ(launch->gpu.size(), 1u);
  EXPECT_TRUE(whole.images[0].end.has_value()) << "the program's section ended cleanly";

  // -q: nothing about it (the user did not ask for metrics) ...
  const ProcessResult quiet = run_process(traced(dir / "q.trace", program, {}, env));
  ASSERT_TRUE(quiet.exited_with(0)) << quiet.describe();
  EXPECT_EQ(quiet.err.find("NVML"), std::string::npos) << quiet.err;
  // ... unless --gpu-metrics was asked for.
  const ProcessResult asked = run_process(traced(dir / "a.trace", program, {"--gpu-metrics=10"}, env));
  ASSERT_TRUE(asked.exited_with(0)) << asked.describe();
  EXPECT_EQ(count(asked.err, "device metrics off: no NVML"), 1u) << asked.err;
}

TEST(GpuMetrics, CudaVisibleDevicesMapsToTheDeviceTheProgramUses) {
  TempDir dir;
  const std::string trace_path = dir / "v.trace";
  const ProcessResult run =
      run_process(traced(trace_path, load({"--busy-ms", "300", "--idle-ms", "100"}), {"--gpu-metrics=20"},
                         with_nvml(dir, {{"CUDA_VISIBLE_DEVICES", "1"}, {"SIMGPU_DEVICE_COUNT", "2"}})));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const MetricsTrace trace = read_metrics_trace(trace_path);
  // Only the visible device is sampled, and it is the program's device 0.
  ASSERT_EQ(trace.sampler_devices.size(), 1u);
  ASSERT_EQ(trace.program_devices.size(), 1u);
  EXPECT_EQ(trace.program_devices[0].device, 0);
  const auto& sampled = trace.sampler_devices.begin()->second;
  EXPECT_TRUE(std::equal(std::begin(sampled.uuid), std::end(sampled.uuid), std::begin(trace.program_devices[0].uuid)));
  EXPECT_EQ(sampled.uuid[12], 1) << "NVML's device 1 (the UUID ends in its index)";
  uint64_t peak = 0;
  for (const auto& sample : trace.of("gpu_utilization", sampled.device)) peak = std::max(peak, sample.value);
  EXPECT_GE(peak, 90u) << "the program's work shows on the visible device";

  // In the timeline the counters are on the program's GPU 0 process.
  const std::string json_path = dir / "v.json";
  const ProcessResult convert = run_proftrace({"convert", trace_path, "-o", json_path});
  ASSERT_EQ(convert.status, 0) << convert.err;
  PerfettoJson json;
  std::string error;
  ASSERT_TRUE(load_perfetto_json(json_path, &json, &error)) << error;
  std::set<uint32_t> kernel_pids, utilization_pids;
  for (const JsonValue* slice : json.slices("kernel")) kernel_pids.insert(uint32_t((*slice)["pid"].as_uint()));
  for (const JsonValue* event : json.events)
    if ((*event)["ph"].str() == "C" && (*event)["name"].str() == "GPU utilization")
      utilization_pids.insert(uint32_t((*event)["pid"].as_uint()));
  ASSERT_EQ(kernel_pids.size(), 1u);
  EXPECT_EQ(utilization_pids, kernel_pids) << "the counters are on the GPU process of the program's kernels";
  EXPECT_EQ(json.process_names[*kernel_pids.begin()].rfind("GPU 0", 0), 0u) << json.process_names[*kernel_pids.begin()];
  const ProcessResult sql = run_proftrace({"export", trace_path, "--sqlite", dir / "v.sqlite"});
  EXPECT_EQ(sql.status, 0) << sql.err;
}

TEST(GpuMetrics, AFourRankJobHasEachRanksDevice) {
  TempDir dir;
  const std::string trace_path = dir / "r.trace";
  const ProcessResult run = run_process(
      traced(trace_path, {build_path("TORCHRUN_LIKE"), "--nproc", "4", build_path("NCCL_RANKS"), "--count", "1024"},
             {"--gpu-metrics=50"}, with_nvml(dir, {{"SIMGPU_DEVICE_COUNT", "4"}})));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const MetricsTrace trace = read_metrics_trace(trace_path);
  EXPECT_EQ(trace.sampler_devices.size(), 4u);
  const std::string json_path = dir / "r.json";
  const ProcessResult convert = run_proftrace({"convert", trace_path, "-o", json_path});
  ASSERT_EQ(convert.status, 0) << convert.err;
  PerfettoJson json;
  std::string error;
  ASSERT_TRUE(load_perfetto_json(json_path, &json, &error)) << error;
  std::set<uint32_t> kernel_pids, memory_pids;
  for (const JsonValue* slice : json.slices("kernel")) kernel_pids.insert(uint32_t((*slice)["pid"].as_uint()));
  for (const JsonValue* event : json.events)
    if ((*event)["ph"].str() == "C" && (*event)["name"].str() == "Memory used")
      memory_pids.insert(uint32_t((*event)["pid"].as_uint()));
  // One GPU process per rank's device, each with its metrics: no device's
  // samples went to another device, none made a process of its own.
  EXPECT_EQ(kernel_pids.size(), 4u);
  EXPECT_EQ(memory_pids, kernel_pids);
}

}  // namespace
}  // namespace proflaunch::e2e
