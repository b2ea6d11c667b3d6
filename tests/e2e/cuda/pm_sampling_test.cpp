// The GPU's own counters end to end (--gpu-metrics-counters, CUPTI PM
// sampling in the shim): the simulated libcupti samples the state the
// simulated driver publishes; the shim's samples land in the program's own
// section, in stats, convert's tracks and SQL. Also: the permission switch,
// a refused LIST, a program that uses CUPTI (and its profiler) itself, and
// the CUPTI activity backend at the same time.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
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

Env machine(const TempDir& dir, Env more = {}) {
  return metrics_machine(dir, "SIMGPU_NVML_DIR", std::move(more));
}
std::vector<std::string> load(std::vector<std::string> args = {}) {
  return load_program("DEVICE_LOAD", std::move(args));
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(PmSampling, SmActiveFollowsTheModelledKernelBusyTimeAtTenKilohertz) {
  TempDir dir;
  const std::string trace_path = dir / "a.trace";
  const ProcessResult run = run_process(traced(trace_path, load({"--busy-ms", "400", "--idle-ms", "400", "--cycles", "2"}),
                                               {"--gpu-metrics-counters=DEFAULT"}, machine(dir)));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(run.err.find("GPU counters (CUPTI PM sampling): CUPTI_ERROR"), std::string::npos) << run.err;
  const MetricsTrace trace = read_metrics_trace(trace_path, MetricsOf::kProgram);
  ASSERT_FALSE(trace.kernels.empty());
  ASSERT_EQ(trace.program_devices.size(), 1u);
  // Defined in the program's section, on its DeviceInfo, from CUPTI PM sampling.
  for (const char* name : {"sm_active", "sm_occupancy", "tensor_active", "gr_active", "dram_read", "dram_write",
                           "pcie_read", "pcie_write", "nvlink_read", "nvlink_write"}) {
    const MetricsTrace::Def* def = trace.def(name);
    ASSERT_NE(def, nullptr) << name;
    EXPECT_EQ(def->record.source, uint8_t(format::GpuMetricSource::kCuptiPmSampling)) << name;
    EXPECT_EQ(def->record.device, trace.program_devices.front().device) << name;
    EXPECT_TRUE(def->reason.empty()) << name << ": " << def->reason;
  }
  EXPECT_EQ(trace.def("sm_active")->unit, "%");
  EXPECT_EQ(trace.def("dram_read")->unit, "B/s");

  const auto active = trace.of("sm_active");
  ASSERT_GE(active.size(), 1000u);
  // ~10 kHz: consecutive samples 100 us apart, and as many as the run's span holds.
  std::vector<uint64_t> steps;
  for (size_t i = 1; i < active.size(); ++i) steps.push_back(active[i].ns - active[i - 1].ns);
  std::sort(steps.begin(), steps.end());
  EXPECT_EQ(steps[steps.size() / 2], 100'000u) << "median step";
  const double rate = double(active.size() - 1) * 1e9 / double(active.back().ns - active.front().ns);
  EXPECT_NEAR(rate, 10'000.0, 500.0);
  // In 10 ms windows, SM active is the kernels' share of the window (each
  // sample's own share, rounded to a whole percent).
  size_t busy_windows = 0, idle_windows = 0;
  for (size_t i = 0; i + 100 <= active.size(); i += 100) {
    const uint64_t from = active[i].ns, to = active[i + 99].ns + 100'000;
    double sum = 0;
    for (size_t k = i; k < i + 100; ++k) sum += double(active[k].value);
    const double mean = sum / 100.0;
    const double expected = 100.0 * double(trace.busy_ns(from, to)) / double(to - from);
    EXPECT_NEAR(mean, expected, 5.0) << "window at " << from;
    if (expected >= 99.0) {
      ++busy_windows;
      EXPECT_GE(mean, 95.0) << "a busy window at " << from;
    }
    if (expected == 0.0) {
      ++idle_windows;
      EXPECT_LE(mean, 2.0) << "an idle window at " << from;
    }
  }
  EXPECT_GE(busy_windows, 20u);
  EXPECT_GE(idle_windows, 20u);

  // stats, labelled by the process's device; the timeline's counter track
  // on the GPU process of the program's kernels; SQL.
  const ProcessResult stats = run_proftrace({"stats", "--section", "gpu-metrics", trace_path});
  ASSERT_EQ(stats.status, 0) << stats.err;
  const size_t row = stats.out.find("sm_active");
  ASSERT_NE(row, std::string::npos) << stats.out;
  const size_t line = stats.out.rfind('\n', row) + 1;
  EXPECT_EQ(stats.out.compare(line, 10, "GPU 0 (pid"), 0) << stats.out.substr(line, 80);

  // The report's device metrics over time chart SM active in its bins.
  const ProcessResult report = run_proftrace({"report", trace_path, "-o", dir / "a.html"});
  ASSERT_EQ(report.status, 0) << report.err;
  std::ifstream page(dir / "a.html");
  const std::string html((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("\"Metric\": \"sm_active\", \"Unit\": \"%\", \"Start (ns)\""), std::string::npos);

  const std::string json_path = dir / "a.json";
  const ProcessResult convert = run_proftrace({"convert", trace_path, "-o", json_path});
  ASSERT_EQ(convert.status, 0) << convert.err;
  PerfettoJson json;
  std::string error;
  ASSERT_TRUE(load_perfetto_json(json_path, &json, &error)) << error;
  std::set<uint32_t> kernel_pids, active_pids;
  size_t active_events = 0;
  for (const JsonValue* slice : json.slices("kernel")) kernel_pids.insert(uint32_t((*slice)["pid"].as_uint()));
  for (const JsonValue* event : json.events)
    if ((*event)["ph"].str() == "C" && (*event)["name"].str() == "SM active") {
      active_pids.insert(uint32_t((*event)["pid"].as_uint()));
      ++active_events;
    }
  EXPECT_EQ(active_pids, kernel_pids);
  EXPECT_EQ(active_events, active.size());
  const ProcessResult proto = run_proftrace({"convert", trace_path, "-o", dir / "a.pftrace"});
  EXPECT_EQ(proto.status, 0) << proto.err;

  const ProcessResult sql = run_proftrace({"export", "--quiet", "--sqlite", dir / "a.sqlite", trace_path});
  ASSERT_TRUE(sql.exited_with(0)) << sql.describe();
  testing::RunOptions query;
  query.argv = {build_path("PYTHON3"), "-c",
                "import sqlite3, sys\n"
                "db = sqlite3.connect(sys.argv[1])\n"
                "for n, pid in db.execute(\"SELECT count(*), p.pid FROM gpu_metrics m JOIN devices d ON "
                "d.id = m.device_id JOIN processes p ON p.id = d.process_id WHERE m.metric = 'sm_active' "
                "GROUP BY p.pid\"):\n"
                "    print(f'{n} {pid}')\n",
                dir / "a.sqlite"};
  const ProcessResult rows = testing::run_process(query);
  ASSERT_TRUE(rows.exited_with(0)) << rows.describe();
  EXPECT_EQ(count(rows.out, "\n"), 1u) << rows.out;
  EXPECT_EQ(rows.out.rfind(std::to_string(active.size()) + " ", 0), 0u) << rows.out;
}

TEST(PmSampling, RefusedPermissionIsSaidExactlyOnceAndNvmlGoesOn) {
  TempDir dir;
  const std::string trace_path = dir / "p.trace";
  const ProcessResult run =
      run_process(traced(trace_path, load({"--busy-ms", "200", "--idle-ms", "200"}), {"--gpu-metrics-counters=DEFAULT"},
                         machine(dir, {{"SIMGPU_CUPTI_PM_PERMISSION", "denied"}})));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(count(run.err, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"), 1u) << run.err;
  const size_t at = run.err.find("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
  ASSERT_NE(at, std::string::npos);
  const std::string line = run.err.substr(run.err.rfind('\n', at) + 1, run.err.find('\n', at) - run.err.rfind('\n', at) - 1);
  EXPECT_NE(line.find("restricted to admin users"), std::string::npos) << line;
  EXPECT_NE(line.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos) << line;
  EXPECT_NE(line.find("/etc/modprobe.d"), std::string::npos) << line;
  EXPECT_NE(line.find("run as root"), std::string::npos) << line;
  EXPECT_NE(line.find("going on with NVML"), std::string::npos) << line;
  const MetricsTrace trace = read_metrics_trace(trace_path, MetricsOf::kProgram);
  EXPECT_EQ(trace.sample_count(), 0u);
  EXPECT_GT(trace.other_samples, 0u) << "the launcher's NVML metrics are still there";
  EXPECT_FALSE(trace.kernels.empty());
}

TEST(PmSampling, AListWithAnUnknownMetricIsRefusedWithItsName) {
  TempDir dir;
  const std::string trace_path = dir / "l.trace";
  const ProcessResult run = run_process(
      traced(trace_path, load({"--busy-ms", "200", "--idle-ms", "200"}),
             {"--gpu-metrics-counters=sm__cycles_active.avg.pct_of_peak_sustained_elapsed,no_such__metric.sum"},
             machine(dir)));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(count(run.err, "'no_such__metric.sum'"), 1u) << run.err;
  EXPECT_NE(run.err.find("CUPTI_ERROR_INVALID_METRIC_NAME); the list is refused"), std::string::npos) << run.err;
  const MetricsTrace trace = read_metrics_trace(trace_path, MetricsOf::kProgram);
  EXPECT_EQ(trace.sample_count(), 0u) << "nothing of a refused list is sampled";
  const MetricsTrace::Def* unknown = trace.def("no_such__metric.sum");
  ASSERT_NE(unknown, nullptr);
  EXPECT_NE(unknown->reason.find("CUPTI_ERROR_INVALID_METRIC_NAME"), std::string::npos) << unknown->reason;
  const MetricsTrace::Def* known = trace.def("sm__cycles_active.avg.pct_of_peak_sustained_elapsed");
  ASSERT_NE(known, nullptr);
  EXPECT_FALSE(known->reason.empty()) << "a metric of the refused list is defined as not sampled";
  EXPECT_EQ(known->unit, "%");
  EXPECT_GT(trace.other_samples, 0u);

  // The same list without the unknown name is sampled.
  TempDir ok_dir;
  ASSERT_TRUE(run_process(traced(ok_dir / "k.trace", load({"--busy-ms", "200", "--idle-ms", "200"}),
                                 {"--gpu-metrics-counters=sm__cycles_active.avg.pct_of_peak_sustained_elapsed"},
                                 machine(ok_dir)))
                  .exited_with(0));
  const MetricsTrace ok = read_metrics_trace(ok_dir / "k.trace", MetricsOf::kProgram);
  EXPECT_GT(ok.of("sm__cycles_active.avg.pct_of_peak_sustained_elapsed").size(), 1000u);
}

TEST(PmSampling, ADeviceWithoutPmSamplingIsSaidAndItsMetricsListedAsLeftOut) {
  TempDir dir;
  const std::string trace_path = dir / "u.trace";
  const ProcessResult run =
      run_process(traced(trace_path, load({"--busy-ms", "100", "--idle-ms", "100"}), {"--gpu-metrics-counters=DEFAULT"},
                         machine(dir, {{"SIMGPU_CUPTI_PM_UNSUPPORTED_DEVICES", "0"}})));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(count(run.err, "CUPTI_ERROR_NOT_SUPPORTED"), 1u) << run.err;
  const MetricsTrace trace = read_metrics_trace(trace_path, MetricsOf::kProgram);
  EXPECT_EQ(trace.sample_count(), 0u);
  const ProcessResult stats = run_proftrace({"stats", "--section", "gpu-metrics", trace_path});
  EXPECT_NE(stats.out.find("sm_active left out: CUPTI_ERROR_NOT_SUPPORTED"), std::string::npos) << stats.out;
}

TEST(PmSampling, AProgramThatUsesCuptiAndItsProfilerItselfRunsIdentically) {
  TempDir dir;
  const Env env = machine(dir);
  for (const bool profiler : {false, true}) {
    std::vector<std::string> program = {build_path("CUPTI_USER"), "--subscribe", "after", "--launches", "8"};
    if (profiler) program.push_back("--pm-sampling");
    const ProcessResult plain = testing::run_process(untraced(program, env));
    const std::string trace_path = dir / (profiler ? "p.trace" : "c.trace");
    const ProcessResult run = testing::run_process(traced(trace_path, program, {"--gpu-metrics-counters=DEFAULT"}, env));
    ASSERT_TRUE(plain.exited_with(0)) << plain.describe();
    ASSERT_TRUE(run.exited_with(0)) << run.describe();
    EXPECT_EQ(run.out, plain.out) << "the program's own CUPTI use is unchanged";
    const MetricsTrace trace = read_metrics_trace(trace_path, MetricsOf::kProgram);
    // The shim sampled while the program ran (with the profiler: until the
    // program took it, 300 ms after its work).
    EXPECT_GT(trace.of("sm_active").size(), profiler ? 2000u : 100u);
    if (profiler) {
      EXPECT_NE(plain.out.find("pm_sampling=CUPTI_SUCCESS"), std::string::npos) << plain.out;
      EXPECT_EQ(count(run.err, "stopped, the program uses the CUPTI profiler itself (cuptiPmSamplingEnable)"), 1u)
          << run.err;
    } else {
      EXPECT_EQ(run.err.find("the CUPTI profiler itself"), std::string::npos) << run.err;
    }
  }
}

TEST(PmSampling, CountersAndCuptiGpuTimingWorkTogether) {
  TempDir dir;
  const std::string trace_path = dir / "t.trace";
  const ProcessResult run = run_process(traced(trace_path, load({"--busy-ms", "300", "--idle-ms", "300"}),
                                               {"--gpu-metrics-counters=DEFAULT", "--gpu-timing=cupti"}, machine(dir)));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(run.err.find("CUPTI not used"), std::string::npos) << run.err;
  const MetricsTrace trace = read_metrics_trace(trace_path, MetricsOf::kProgram);
  ASSERT_FALSE(trace.timing_info.empty());
  EXPECT_EQ(trace.timing_info.front().source, uint8_t(format::GpuTimingSource::kCupti));
  ASSERT_FALSE(trace.activity.empty());
  for (const auto& activity : trace.activity)
    EXPECT_EQ(activity.source, uint8_t(format::GpuTimingSource::kCupti));
  const auto active = trace.of("sm_active");
  ASSERT_GT(active.size(), 1000u);
  uint64_t high = 0;
  for (const auto& [at, value] : active) high += value >= 90;
  EXPECT_GT(high, 1000u) << "the busy phase is seen";
}

}  // namespace
}  // namespace proflaunch::e2e
