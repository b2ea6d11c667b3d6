// proftrace dump: one line per record, names resolved.
#include <gtest/gtest.h>

#include <sstream>

#include "formats/reader.h"
#include "tests/unit/tools/tool_fixture.h"
#include "tests/unit/tools/trace_scenarios.h"

namespace proflaunch::testing {
namespace {

using namespace proflaunch::format;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

const std::string* line_starting(const std::vector<std::string>& lines, const std::string& prefix) {
  for (const auto& line : lines)
    if (line.rfind(prefix, 0) == 0) return &line;
  return nullptr;
}

TEST(Dump, EveryRecordIsOneLineWithNamesResolved) {
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 0x77, 300, 1000, "host9", "app");
  trace.function(p.section, 0xF00, "_Z6kernelPfi");
  trace.thread(p.section, 301, "loader");
  trace.event(p.section, 301, launch(p, 5, 2000, 2600, 0xF00, kStreamPerThread));
  trace.event(p.section, 301, activity(5, 3000, 3500, kStreamPerThread, GpuActivityKind::kKernel));
  trace.section_end(p.section, 9000, 3, 0);
  const std::string path = write_trace(trace, "d.trace");

  const CommandOutput result = run_dump_on({path});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto lines = lines_of(result.out);

  // Every record the reader delivers is one line.
  std::string error;
  auto reader = TraceReader::open_file(path, &error);
  struct Counter : RecordVisitor {
    size_t n = 0;
    void on_record(const RecordView&) override { ++n; }
  } counter;
  reader->read(counter);
  EXPECT_EQ(lines.size(), counter.n);

  const std::string* launch_line = line_starting(lines, "KernelLaunch");
  ASSERT_NE(launch_line, nullptr);
  for (const char* part : {"section=0x77", "pid=300", "tid=301", "api=cuLaunchKernel", "correlation_id=5",
                           "dur_ns=600", "kernel=\"kernel(float*, int)\"", "stream=per-thread default",
                           "grid=(64,2,1)", "block=(256,1,1)", "shared_bytes=1024"})
    EXPECT_NE(launch_line->find(part), std::string::npos) << part << " in " << *launch_line;

  const std::string* activity_line = line_starting(lines, "GpuActivity");
  ASSERT_NE(activity_line, nullptr);
  EXPECT_NE(activity_line->find("start_ns=3000"), std::string::npos) << *activity_line;
  EXPECT_NE(activity_line->find("kind=kernel"), std::string::npos) << *activity_line;

  const std::string* process_line = line_starting(lines, "ProcessInfo");
  ASSERT_NE(process_line, nullptr);
  EXPECT_NE(process_line->find("host=\"host9\""), std::string::npos) << *process_line;
  EXPECT_NE(process_line->find("command_line=\"app\""), std::string::npos) << *process_line;

  const std::string* function_line = line_starting(lines, "FunctionDef");
  ASSERT_NE(function_line, nullptr);
  EXPECT_NE(function_line->find("demangled=\"kernel(float*, int)\""), std::string::npos) << *function_line;
  EXPECT_NE(line_starting(lines, "ThreadInfo"), nullptr);
  EXPECT_NE(line_starting(lines, "SectionEnd"), nullptr);
}

// FunctionDef's resources and DeviceInfo's limits: printed where known only.
TEST(Dump, KernelResourcesAndDeviceLimitsWhereKnown) {
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 0x78, 400, 1000);
  FunctionResources resources;
  resources.registers_per_thread = 40;
  resources.static_shared_bytes = 0;
  resources.known = kFunctionRegisters | kFunctionStaticShared;
  trace.function(p.section, 0xA, "_Z1av", 0, resources);
  trace.function(p.section, 0xB, "_Z1bv");
  DeviceSpec device;
  device.warp_size = 32;
  device.max_threads_per_multiprocessor = 2048;
  device.compute_capability_major = 9;
  trace.device(p.section, device);
  const CommandOutput result = run_dump_on({write_trace(trace, "r.trace")}, true);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto lines = lines_of(result.out);
  const std::string* known = nullptr;
  const std::string* unknown = nullptr;
  for (const auto& line : lines) {
    if (line.rfind("FunctionDef", 0) != 0) continue;
    (line.find("_Z1av") != std::string::npos ? known : unknown) = &line;
  }
  ASSERT_NE(known, nullptr);
  ASSERT_NE(unknown, nullptr);
  EXPECT_NE(known->find("registers=40"), std::string::npos) << *known;
  EXPECT_NE(known->find("static_shared_bytes=0"), std::string::npos) << "0 is a value when known: " << *known;
  EXPECT_EQ(known->find("max_threads_per_block"), std::string::npos) << *known;
  EXPECT_EQ(unknown->find("registers="), std::string::npos) << *unknown;
  const std::string* device_line = line_starting(lines, "DeviceInfo");
  ASSERT_NE(device_line, nullptr);
  for (const char* part : {"compute_capability=9.0", "warp_size=32", "max_threads_per_sm=2048"})
    EXPECT_NE(device_line->find(part), std::string::npos) << part << " in " << *device_line;
  EXPECT_EQ(device_line->find("registers_per_sm"), std::string::npos) << *device_line;
}

TEST(Dump, DefinitionsOnlySkipsEvents) {
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 1, 2, 0);
  trace.event(p.section, 2, launch(p, 1, 10, 20, 0x1, kStreamLegacy));
  const CommandOutput result = run_dump_on({write_trace(trace, "d.trace")}, true);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out.find("KernelLaunch"), std::string::npos);
  EXPECT_NE(result.out.find("ProcessInfo"), std::string::npos);
}

}  // namespace
}  // namespace proflaunch::testing
