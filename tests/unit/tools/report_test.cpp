// proftrace report: the page's data is stats' tables (each one equal to what
// `stats --json` says for the same trace), the page embeds it inert, a failed
// write leaves nothing behind; the overview's activity table (the page's
// utilization chart) adds up to the run's breakdown; the template filler.
// The page in a browser: tests/e2e/report.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
#include <set>
#include <sstream>

#include "tests/unit/tools/tool_fixture.h"
#include "tests/unit/tools/trace_scenarios.h"
#include "tools/proftrace/html_text.h"
#include "tools/proftrace/stats/gpu_metric_timeline.h"

namespace proflaunch::testing {
namespace {

using namespace proflaunch::format;

constexpr uint64_t kT = 1'000'000'000;
constexpr uint64_t kStream = 7;

// One process: a kernel on [kT+1000, kT+4000), a copy on [kT+5000, kT+7000),
// a memset on [kT+8000, kT+8500), the last event at kT+10000. Its
// allocation call carries a thread name with "</script>" in it.
std::string small_trace(const std::string& name = "small.trace") {
  TraceBuilder trace;
  TracedProcess p = add_process(trace, 1, 4242, kT);
  trace.device(1, DeviceSpec{.ordinal = 0, .name = "Simulated </script><b>GPU</b>", .multiprocessor_count = 108});
  trace.event(1, 100, launch(p, 1, kT + 500, kT + 600, 0xA, kStream));
  trace.event(1, 100, activity(1, kT + 1000, kT + 4000, kStream, GpuActivityKind::kKernel));
  trace.event(1, 100, copy(p, 2, kT + 4500, kT + 4600, 1 << 20, kStream));
  trace.event(1, 100, activity(2, kT + 5000, kT + 7000, kStream, GpuActivityKind::kMemoryCopy));
  trace.event(1, 100, memset(p, 3, kT + 7500, kT + 7600, 4096, kStream));
  trace.event(1, 100, activity(3, kT + 8000, kT + 8500, kStream, GpuActivityKind::kMemorySet));
  trace.event(1, 100, launch(p, 4, kT + 9900, kT + 10000, 0xA, kStream));
  return write_trace(trace, name);
}

std::string slurp(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// A canonical text of a JSON value (member order kept): equal trees, equal text.
std::string canonical(const JsonValue& v) {
  switch (v.type) {
    case JsonValue::Type::kNull: return "null";
    case JsonValue::Type::kBool: return v.boolean ? "true" : "false";
    case JsonValue::Type::kNumber: return v.text;
    case JsonValue::Type::kString: return "\"" + v.text + "\"";
    case JsonValue::Type::kArray: {
      std::string out = "[";
      for (const auto& item : v.items) out += canonical(item) + ",";
      return out + "]";
    }
    case JsonValue::Type::kObject: {
      std::string out = "{";
      for (const auto& [key, value] : v.members) out += "\"" + key + "\":" + canonical(value) + ",";
      return out + "}";
    }
  }
  return "?";
}

struct ReportRun {
  int exit_code;
  std::string err;
};
ReportRun report(tools::ReportCommand command) {
  std::FILE* err = std::tmpfile();
  ReportRun run;
  run.exit_code = tools::run_report(command, err);
  std::rewind(err);
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, err)) > 0;) run.err.append(buffer, n);
  std::fclose(err);
  return run;
}

TEST(Report, EveryTableIsStatsTableForTheSameTrace) {
  const std::string trace = small_trace();
  tools::ReportCommand command;
  command.inputs = {trace};
  command.output = temp_path("r.html");
  command.json = temp_path("r.json");
  command.quiet = true;
  const ReportRun run = report(command);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::string error;
  const auto page_data = parse_json(slurp(command.json), &error);
  ASSERT_TRUE(page_data.has_value()) << error;

  tools::StatsCommand stats;
  stats.inputs = {trace};
  stats.json = true;
  stats.top = command.top;
  stats.timeline_bins = 240;
  const CommandOutput out = run_stats_on(stats);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const auto stats_data = parse_json(out.out, &error);
  ASSERT_TRUE(stats_data.has_value()) << error;

  const auto& page_tables = (*page_data)["stats"]["tables"].items;
  size_t compared = 0;
  for (const JsonValue& table : (*stats_data)["tables"].items) {
    const JsonValue* same = nullptr;
    for (const JsonValue& candidate : page_tables)
      if (candidate["section"].str() == table["section"].str() && candidate["title"].str() == table["title"].str())
        same = &candidate;
    ASSERT_NE(same, nullptr) << table["title"].str() << " is not in the report";
    EXPECT_EQ(canonical(*same), canonical(table)) << table["title"].str();
    ++compared;
  }
  EXPECT_GE(compared, 6u) << "kernels, memory operations, APIs, overview (4 tables), recommendations";
  // No table of the page's own (the code view by function, file and module:
  // this trace has no stacks, tests/e2e/report has them) and the memory analysis.
  std::set<std::string> sections;
  for (const JsonValue& table : page_tables) sections.insert(table["section"].str());
  for (const char* section : {"gpu-kernels", "mem-ops", "overview", "recommendations"})
    EXPECT_TRUE(sections.count(section)) << section;
  EXPECT_EQ(page_tables.size(), compared);
  EXPECT_TRUE((*page_data)["memory"].is_object());
  EXPECT_EQ((*page_data)["inputs"].items.at(0).str(), trace);
}

TEST(Report, ThePageCarriesTheDataInertAndNothingFromOutside) {
  tools::ReportCommand command;
  command.inputs = {small_trace()};
  command.output = temp_path("r.html");
  command.quiet = true;
  ASSERT_EQ(report(command).exit_code, 0);
  const std::string page = slurp(command.output);
  // The device name's "</script>" would end the data element: escaped as \u003c.
  EXPECT_EQ(page.find("Simulated </script>"), std::string::npos);
  EXPECT_NE(page.find("Simulated \\u003c/script>\\u003cb>GPU\\u003c/b>"), std::string::npos);
  EXPECT_NE(page.find("<script type=\"application/json\" id=\"report-data\">{\"title\""), std::string::npos);
  EXPECT_NE(page.find("<script type=\"application/json\" id=\"memory-data\">{"), std::string::npos);
  // Every placeholder filled; no reference to anything outside the file.
  for (const char* placeholder : {"@DATA@", "@MEMORY_DATA@", "@SCRIPT@", "@MEMORY_SCRIPT@", "@STYLE@", "@TITLE@"})
    EXPECT_EQ(page.find(placeholder), std::string::npos) << placeholder;
  // (The SVG namespace's http:// is a name, not a fetch; url(# is a reference inside the page.)
  for (const char* outside : {"https://", "src=", "href=", "url(h", "url(/", "url(\"", "@import", "fetch(",
                              "XMLHttpRequest"})
    EXPECT_EQ(page.find(outside), std::string::npos) << outside;
}

TEST(Report, DefaultsNextToTheInputAndRefusesBadOptionsWithoutWriting) {
  EXPECT_EQ(tools::default_report_output("/x/run.trace"), "/x/run-report.html");
  EXPECT_EQ(tools::default_report_output("run.part"), "run-report.html");
  EXPECT_EQ(tools::default_report_output("run"), "run-report.html");

  tools::ReportCommand command;
  command.inputs = {small_trace("default.trace")};
  command.quiet = true;
  ASSERT_EQ(report(command).exit_code, 0);
  EXPECT_TRUE(exists(tools::default_report_output(command.inputs[0])));

  command.output = temp_path("bad-step.html");
  command.step_range = "@domain-only";
  ReportRun run = report(command);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("--step-range '@domain-only' is not an NVTX range"), std::string::npos) << run.err;
  EXPECT_FALSE(exists(command.output));

  command.step_range.clear();
  command.output = temp_path("no-such-dir/r.html");
  run = report(command);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("cannot create the page"), std::string::npos) << run.err;

  command.inputs = {temp_path("missing.trace")};
  command.output = temp_path("missing.html");
  run = report(command);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_FALSE(exists(command.output));
  EXPECT_FALSE(exists(command.output + ".partial"));
}

TEST(Report, ActivityBinsAreContiguousAndAddUpToTheRun) {
  tools::StatsCommand stats;
  stats.inputs = {small_trace()};
  stats.json = true;
  stats.sections = {"overview"};
  stats.timeline_bins = 4;
  const CommandOutput out = run_stats_on(stats);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  std::string error;
  const auto data = parse_json(out.out, &error);
  ASSERT_TRUE(data.has_value()) << error;
  const JsonValue* activity = nullptr;
  for (const JsonValue& table : (*data)["tables"].items)
    if (table["title"].str() == "Overview: GPU activity over time") activity = &table;
  ASSERT_NE(activity, nullptr) << out.out;
  const auto& rows = (*activity)["rows"].items;
  ASSERT_EQ(rows.size(), 4u);
  uint64_t kernel = 0, memcpy = 0, memset = 0, end = 0;
  for (const JsonValue& row : rows) {
    EXPECT_EQ(row["Start (ns)"].as_uint(), end) << "bins follow each other";
    end = row["End (ns)"].as_uint();
    kernel += row["Kernel (ns)"].as_uint();
    memcpy += row["Memcpy (ns)"].as_uint();
    memset += row["Memset (ns)"].as_uint();
    const double busy = row["GPU Busy (%)"].as_double();
    const double length = double(row["End (ns)"].as_uint() - row["Start (ns)"].as_uint());
    EXPECT_NEAR(busy, 100.0 * double(row["Kernel (ns)"].as_uint() + row["Memcpy (ns)"].as_uint() +
                                     row["Memset (ns)"].as_uint()) / length, 0.06);
  }
  EXPECT_EQ(kernel, 3000u);
  EXPECT_EQ(memcpy, 2000u);
  EXPECT_EQ(memset, 500u);
  // The analysed span: the first event of the trace to the last.
  EXPECT_GE(end, 9000u);
  // The kernel [1000, 4000) from kT: nothing of it in the last bin.
  EXPECT_EQ(rows[3]["Kernel (ns)"].as_uint(), 0u);

  stats.timeline_bins = 0;
  EXPECT_EQ(run_stats_on(stats).out.find("GPU activity over time"), std::string::npos) << "only when asked";
}

// A process whose events span [kT+500, kT+10000) and the launcher's device
// sampler beside it: a utilization (a rate: each reading covers the time
// since the one before) read every `step_ns` from kT, 0 % up to kT+5000 and
// 100 % after, and the memory used (a gauge: it holds from its reading on)
// at 1 MiB from kT+2000 and 3 MiB from kT+6000.
std::string trace_with_device_metrics(uint64_t step_ns = 1000) {
  TraceBuilder trace;
  TracedProcess p = add_process(trace, 1, 4242, kT);
  trace.device(1, DeviceSpec{.ordinal = 0});
  trace.event(1, 100, launch(p, 1, kT + 500, kT + 600, 0xA, kStream));
  trace.event(1, 100, activity(1, kT + 1000, kT + 4000, kStream, GpuActivityKind::kKernel));
  trace.event(1, 100, launch(p, 4, kT + 9900, kT + 10000, 0xA, kStream));
  ProcessSpec sampler;
  sampler.pid = 77;
  sampler.flags = kProcessDeviceSampler;
  sampler.monotonic_ns = kT - 5000;
  trace.process(2, sampler);
  trace.device(2, DeviceSpec{.ordinal = 0});
  auto def = [&](uint32_t id, const char* name, const char* unit) {
    GpuMetricDefRecord d{};
    d.metric = id;
    d.device = 0;
    d.kind = uint8_t(GpuMetricKind::kGauge);
    d.source = uint8_t(GpuMetricSource::kNvml);
    d.link = 0xFFFF;
    d.name_string = trace.string(2, name);
    d.unit_string = trace.string(2, unit);
    trace.define(2, d);
  };
  def(1, "gpu_utilization", "%");
  def(2, "memory_used", "bytes");
  auto sample = [&](uint32_t metric, uint64_t at, uint64_t value) {
    GpuMetricSampleRecord s{};
    s.metric = metric;
    s.time_ns = at;
    s.value = value;
    trace.event(2, 77, s);
  };
  for (uint64_t t = 0; t <= 10000; t += step_ns) sample(1, kT + t, t <= 5000 ? 0 : 100);
  sample(2, kT + 2000, 1 << 20);
  sample(2, kT + 6000, 3 << 20);
  sample(2, kT + 10000, 3 << 20);
  return write_trace(trace, "metrics" + std::to_string(step_ns) + ".trace");
}

// Row (metric, start) -> mean of the "Device metrics over time" table.
std::map<std::pair<std::string, uint64_t>, double> metrics_over_time(const std::string& path, size_t bins,
                                                                     uint64_t* activity_end = nullptr) {
  tools::StatsCommand stats;
  stats.inputs = {path};
  stats.json = true;
  stats.sections = {"overview", "gpu-metrics"};
  stats.timeline_bins = bins;
  const CommandOutput out = run_stats_on(stats);
  EXPECT_EQ(out.exit_code, 0) << out.err;
  std::string error;
  const auto data = parse_json(out.out, &error);
  EXPECT_TRUE(data.has_value()) << error;
  std::map<std::pair<std::string, uint64_t>, double> means;
  if (!data) return means;
  for (const JsonValue& table : (*data)["tables"].items) {
    if (table["title"].str() == "Overview: GPU activity over time" && activity_end != nullptr)
      *activity_end = table["rows"].items.back()["End (ns)"].as_uint();
    if (table["title"].str() != "Device metrics over time") continue;
    for (const JsonValue& row : table["rows"].items)
      means[{row["Metric"].str(), row["Start (ns)"].as_uint()}] = row["Mean"].as_double();
  }
  return means;
}

TEST(Report, DeviceMetricsOverTimeShareTheActivityBinsAndPlaceRatesBeforeTheirReading) {
  const std::string path = trace_with_device_metrics();
  uint64_t activity_end = 0;
  // The analysed span is [kT+500, kT+10000): bins of 2375 ns from kT+500.
  const auto means = metrics_over_time(path, 4, &activity_end);
  EXPECT_EQ(activity_end, 9500u) << "the activity chart's axis";
  ASSERT_EQ(means.size(), 8u);
  // Utilization: 100 % covers [kT+5000, kT+10000) (the reading at kT+6000
  // says what ran since kT+5000).
  EXPECT_DOUBLE_EQ((means.at({"gpu_utilization", 0})), 0.0);                   // [500, 2875)
  EXPECT_NEAR((means.at({"gpu_utilization", 2375})), 100.0 * 250 / 2375, 0.05);  // [2875, 5250), to 0.1
  EXPECT_DOUBLE_EQ((means.at({"gpu_utilization", 4750})), 100.0);              // [5250, 7625)
  EXPECT_DOUBLE_EQ((means.at({"gpu_utilization", 7125})), 100.0);              // [7625, 10000)
  // Memory: nothing before its first reading at kT+2000; 1 MiB held to
  // kT+6000, then 3 MiB.
  EXPECT_DOUBLE_EQ((means.at({"memory_used", 0})), double(1 << 20));  // covered [2000, 2875) only
  EXPECT_DOUBLE_EQ((means.at({"memory_used", 2375})), double(1 << 20));
  EXPECT_NEAR((means.at({"memory_used", 4750})), (750.0 * (1 << 20) + 1625.0 * (3 << 20)) / 2375, 1);
  EXPECT_DOUBLE_EQ((means.at({"memory_used", 7125})), double(3 << 20));

  EXPECT_TRUE(metrics_over_time(path, 0).empty()) << "only when asked (the report asks)";
}

TEST(Report, DeviceMetricsOverTimeKeepBoundedMemoryAndTheSameMeans) {
  // A reading every 2 ns: 5001 readings, more than a series keeps
  // segments (kMaxSegments), so neighbours are merged; the bins' means stay
  // those of the readings every 1000 ns to within the merged resolution.
  static_assert(10000 / 2 > tools::stats::GpuMetricTimeline::kMaxSegments);
  const auto many = metrics_over_time(trace_with_device_metrics(2), 4);
  const auto few = metrics_over_time(trace_with_device_metrics(1000), 4);
  ASSERT_EQ(many.size(), few.size());
  for (const auto& [key, mean] : few)
    EXPECT_NEAR(many.at(key), mean, 0.005 * mean + 0.01) << key.first << " " << key.second;
}

TEST(FillTemplate, FillsEachPlaceholderOnceAndNeverInsideAValue) {
  using tools::fill_template;
  EXPECT_EQ(fill_template("<t>@A@</t><d>@B@</d>", {{"A", "x@B@y"}, {"B", "2"}}), "<t>x@B@y</t><d>2</d>");
  EXPECT_EQ(fill_template("mail user@host and @A@", {{"A", "1"}}), "mail user@host and 1");
  EXPECT_EQ(fill_template("@UNKNOWN@ @A@ @", {{"A", "v"}}), "@UNKNOWN@ v @");
  EXPECT_EQ(fill_template("@A@@A@", {{"A", "z"}}), "zz");
  EXPECT_EQ(tools::script_safe("{\"a\": \"</script>\"}"), "{\"a\": \"\\u003c/script>\"}");
}

}  // namespace
}  // namespace proflaunch::testing
