// CPU samples and blocking calls (issue 38, items 4 and 5) in proftrace's
// outputs, on a hand-built trace whose answers are known: the timeline
// (JSON instants and slices; protobuf callstack samples and slices, read
// back by Perfetto's own trace processor), `stats --section cpu` with its
// filters, and what the gpu-idle-gap rule says the threads did in a gap.
//
// The trace (times after kT): one process (pid 7), device 0. The main
// thread (tid 1) launches a kernel at 0 (GPU 0.1-1 ms) and one at 29.9 ms
// (GPU 30.01-31 ms): the GPU is idle 1-30.01 ms (29.01 ms). Meanwhile main
// blocks in pthread_cond_wait 2-22 ms (Queue.get at train.py:41) and is
// sampled 6 times at 23-28 ms in json's loads called from data.py:17
// (native leaf json_scan in libfast.so); it was sampled once before the gap
// (0.5 ms, in forward) and sleeps 31.5-32 ms after the last GPU work. The
// loader thread (tid 3) is sampled 10 times at 2-11 ms in decode
// (data.py:17) and reads a pipe 12-14 ms. Sampling at 1 kHz: a sample is
// 1 ms of CPU time.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>
#include <span>

#include "tests/unit/stacks/synthetic_stacks.h"
#include "tests/unit/tools/json_value.h"
#include "tests/unit/tools/tool_fixture.h"

namespace proflaunch::testing {
namespace {

using namespace format;

constexpr uint64_t kSection = 0xC9;
constexpr uint32_t kMain = 1, kLoader = 3, kGpuThread = 99;
constexpr uint64_t kT = 1'000'000'000;
constexpr uint64_t kMs = 1'000'000;

std::span<const uint8_t> text_bytes(const std::string& text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// `steps`: NVTX "train_step" ranges 0-15 ms, 15-33 ms and 33-40 ms on main
// (a kernel launched at 34 ms in the third).
std::string cpu_trace(bool steps, const std::string& name) {
  TraceBuilder trace;
  trace.process(kSection, {.pid = 7, .argv = {"python", "train.py"}});
  trace.thread(kSection, kMain, "python");
  trace.thread(kSection, kLoader, "loader");
  trace.device(kSection, DeviceSpec{.ordinal = 0, .name = "Simulated A"});
  SyntheticStacks s(trace, kSection);
  s.module("/opt/lib/libfast.so", 0x10000, 0x20000);
  s.module("/usr/lib/libpython3.11.so", 0x30000, 0x40000);
  s.symbol(0x10100, "json_scan", "scan.c", 5);
  s.symbol(0x30100, "_PyEval_EvalFrameDefault");
  s.native(1, {0x10100, 0x30100});
  s.python(1, {{"/home/me/data.py", "decode", 17, false}, {"/home/me/loader.py", "produce", 30, true}});
  // queue.get waits in threading's Condition.wait: the wait is named by the
  // function the program's line called (Queue.get), not the innermost one.
  s.python(2, {{"/usr/lib/python3.11/threading.py", "Condition.wait", 320, false},
               {"/usr/lib/python3.11/queue.py", "Queue.get", 180, false},
               {"/home/me/train.py", "main", 41, true}});
  s.python(3, {{"/usr/lib/python3.11/json/__init__.py", "loads", 346, false},
               {"/home/me/data.py", "parse", 17, false},
               {"/home/me/train.py", "main", 44, true}});
  s.python(4, {{"/home/me/train.py", "forward", 50, true}});
  const uint16_t launch_api = trace.api(kSection, "cuLaunchKernel", ApiDomain::kDriver);
  const uint16_t cond_api = trace.api(kSection, "pthread_cond_wait", ApiDomain::kOsRuntime);
  const uint16_t read_api = trace.api(kSection, "read", ApiDomain::kOsRuntime);
  const uint16_t sleep_api = trace.api(kSection, "nanosleep", ApiDomain::kOsRuntime);
  const uint16_t push_api = trace.api(kSection, "nvtxRangePushA", ApiDomain::kAnnotation);
  const uint16_t pop_api = trace.api(kSection, "nvtxRangePop", ApiDomain::kAnnotation);

  CpuSamplingInfoRecord info{};
  info.hz = 1000;
  info.mechanism = static_cast<uint8_t>(CpuSamplingMechanism::kThreadCpuTimer);
  info.state = static_cast<uint8_t>(CpuSamplingState::kOn);
  info.signal_number = 34;
  info.time_ns = kT - kMs;
  trace.event(kSection, kMain, info);

  uint64_t correlation = 0;
  auto push = [&](uint64_t at) {
    NvtxEventRecord r{};
    r.type = static_cast<uint8_t>(NvtxEventType::kPush);
    r.message_type = static_cast<uint8_t>(NvtxMessageType::kInline);
    r.span = ApiSpan{at - 10, at, 0, 0, push_api, 0};
    trace.event_with_tail(kSection, kMain, r, text_bytes("train_step"));
  };
  auto pop = [&](uint64_t at) {
    NvtxEventRecord r{};
    r.type = static_cast<uint8_t>(NvtxEventType::kPop);
    r.span = ApiSpan{at, at + 10, 0, 0, pop_api, 0};
    trace.event(kSection, kMain, r);
  };
  auto kernel = [&](uint64_t launch_ns, uint64_t start_ns, uint64_t end_ns) {
    KernelLaunchRecord launch{};
    launch.span = ApiSpan{launch_ns, launch_ns + 10'000, ++correlation, 0, launch_api, kApiAsync};
    launch.grid = {1024, 1, 1};
    launch.block = {256, 1, 1};
    trace.event(kSection, kMain, launch);
    GpuActivityRecord gpu{};
    gpu.correlation_id = correlation;
    gpu.start_ns = start_ns;
    gpu.end_ns = end_ns;
    gpu.kind = static_cast<uint8_t>(GpuActivityKind::kKernel);
    trace.event(kSection, kGpuThread, gpu);
  };
  auto sample = [&](uint32_t tid, uint64_t at, uint32_t native, uint32_t python) {
    CpuSampleRecord r{};
    r.header = header_for<CpuSampleRecord>();
    r.flags = native != 0 ? kCpuSampleLeafIsPc : 0;
    r.time_ns = at;
    r.thread_cpu_ns = at - kT + 5'000;
    r.native_stack = native;
    r.python_stack = python;
    trace.event(kSection, tid, r);
  };
  auto blocking = [&](uint32_t tid, uint16_t api, WaitObjectKind kind, uint64_t object, uint64_t begin,
                      uint64_t end, uint32_t python) {
    BlockingCallRecord r{};
    r.object_kind = static_cast<uint8_t>(kind);
    r.span = ApiSpan{begin, end, 1000 + ++correlation, 0, api, 0};
    r.object = object;
    trace.event(kSection, tid, r);
    if (python == 0) return;
    CallStackRecord stack{};
    stack.point = static_cast<uint8_t>(StackPoint::kBlocking);
    stack.correlation_id = r.span.correlation_id;
    stack.python_stack = python;
    trace.event(kSection, tid, stack);
  };

  if (steps) push(kT - 1000);
  kernel(kT, kT + kMs / 10, kT + kMs);
  sample(kMain, kT + kMs / 2, 0, 4);
  blocking(kMain, cond_api, WaitObjectKind::kCondition, 0xABC0, kT + 2 * kMs, kT + 22 * kMs, 2);
  if (steps) {
    pop(kT + 15 * kMs);
    push(kT + 15 * kMs + 100);
  }
  for (int i = 0; i < 6; ++i) sample(kMain, kT + uint64_t(23 + i) * kMs, 1, 3);
  kernel(kT + 29'900'000, kT + 30'010'000, kT + 31 * kMs);
  blocking(kMain, sleep_api, WaitObjectKind::kNone, 0, kT + 31'500'000, kT + 32 * kMs, 0);
  if (steps) {
    // A third step (steps are found from 3 on), with its own kernel.
    pop(kT + 33 * kMs);
    push(kT + 33 * kMs + 100);
    kernel(kT + 34 * kMs, kT + 34'100'000, kT + 35 * kMs);
    pop(kT + 40 * kMs);
  }
  for (int i = 0; i < 10; ++i) sample(kLoader, kT + uint64_t(2 + i) * kMs, 0, 1);
  blocking(kLoader, read_api, WaitObjectKind::kPipe, 5, kT + 12 * kMs, kT + 14 * kMs, 0);
  return write_trace(trace, name);
}

// The rows of the cpu section's tables as JSON objects, by table title.
std::map<std::string, std::vector<JsonValue>> cpu_tables(const std::string& trace, const std::string& during = "",
                                                         size_t step = 0, std::string* text = nullptr) {
  tools::StatsCommand command;
  command.inputs = {trace};
  command.sections = {"cpu"};
  command.during = during;
  command.step = step;
  if (text != nullptr) *text = run_stats_on(command).out;
  command.json = true;
  const CommandOutput out = run_stats_on(command);
  EXPECT_EQ(out.exit_code, 0) << out.err;
  std::string error;
  const auto document = parse_json(out.out, &error);
  EXPECT_TRUE(document.has_value()) << error << "\n" << out.out;
  std::map<std::string, std::vector<JsonValue>> tables;
  if (!document) return tables;
  for (const JsonValue& table : (*document)["tables"].items) {
    EXPECT_EQ(table["section"].str(), "cpu");
    const std::string title = table["title"].str();
    const std::string key = title.substr(0, title.find(" ("));
    for (const JsonValue& row : table["rows"].items) tables[key].push_back(row);
  }
  return tables;
}

const JsonValue* row_of(const std::vector<JsonValue>& rows, const std::string& tid, const std::string& column,
                        const std::string& value) {
  for (const JsonValue& row : rows)
    if (row["Tid"].str() == tid && row[column].str() == value) return &row;
  return nullptr;
}

TEST(CpuOutputs, StatsCpuCountsSelfAndTotalPerThread) {
  const std::string trace = cpu_trace(false, "cpu_all.trace");
  std::string text;
  auto tables = cpu_tables(trace, "", 0, &text);
  const auto& functions = tables["CPU samples by function"];
  const JsonValue* scan = row_of(functions, "1", "Function", "json_scan");
  ASSERT_NE(scan, nullptr) << text;
  EXPECT_EQ((*scan)["Self"].str(), "6");
  EXPECT_EQ((*scan)["Total"].str(), "6");
  EXPECT_EQ((*scan)["Self CPU (ns)"].str(), "6000000") << "1 kHz: a sample is 1 ms";
  EXPECT_EQ((*scan)["Thread"].str(), "python");
  const JsonValue* parse = row_of(functions, "1", "Function", "parse (data.py)");
  ASSERT_NE(parse, nullptr) << text;
  EXPECT_EQ((*parse)["Self"].str(), "0");
  EXPECT_EQ((*parse)["Total"].str(), "6") << "on the stack of the 6 json samples, running none";
  const JsonValue* forward = row_of(functions, "1", "Function", "forward (train.py)");
  ASSERT_NE(forward, nullptr) << text;
  EXPECT_EQ((*forward)["Self"].str(), "1");
  const JsonValue* decode = row_of(functions, "3", "Function", "decode (data.py)");
  ASSERT_NE(decode, nullptr) << text;
  EXPECT_EQ((*decode)["Self"].str(), "10");
  EXPECT_EQ((*decode)["Self %"].str(), "100.0");
  EXPECT_EQ(row_of(functions, "1", "Function", "_PyEval_EvalFrameDefault"), nullptr)
      << "the interpreter's frame is replaced by the Python frames it ran";

  const auto& lines = tables["CPU samples by Python line"];
  const JsonValue* loads = row_of(lines, "1", "Python line", "/usr/lib/python3.11/json/__init__.py:346 loads");
  ASSERT_NE(loads, nullptr) << text;
  EXPECT_EQ((*loads)["Self"].str(), "6") << "the innermost Python frame of the json samples";
  const JsonValue* line17 = row_of(lines, "1", "Python line", "/home/me/data.py:17 parse");
  ASSERT_NE(line17, nullptr) << text;
  EXPECT_EQ((*line17)["Self"].str(), "0");
  EXPECT_EQ((*line17)["Total"].str(), "6");
  EXPECT_EQ((*line17)["Total %"].str(), "85.7") << "6 of main's 7 samples";

  const auto& modules = tables["CPU samples by module"];
  const JsonValue* fast = row_of(modules, "1", "Module", "libfast.so");
  ASSERT_NE(fast, nullptr) << text;
  EXPECT_EQ((*fast)["Self"].str(), "6");

  const auto& waits = tables["Time blocked by call site"];
  const JsonValue* cond =
      row_of(waits, "1", "Call site", "pthread_cond_wait (condition variable) in Queue.get at train.py:41");
  ASSERT_NE(cond, nullptr) << text;
  EXPECT_EQ((*cond)["Calls"].str(), "1");
  EXPECT_EQ((*cond)["Blocked (ns)"].str(), "20000000");
  const JsonValue* sleep = row_of(waits, "1", "Call site", "nanosleep");
  ASSERT_NE(sleep, nullptr) << text;
  EXPECT_EQ((*sleep)["Blocked (ns)"].str(), "500000");
  const JsonValue* read = row_of(waits, "3", "Call site", "read (pipe)");
  ASSERT_NE(read, nullptr) << text;
  EXPECT_EQ((*read)["Blocked (ns)"].str(), "2000000");
  EXPECT_TRUE(has(text, "sampled at 1000 Hz of each thread's CPU time")) << text;

  // The program's waits are not traced API calls: not in the API table.
  tools::StatsCommand api;
  api.inputs = {trace};
  api.sections = {"api"};
  const CommandOutput api_out = run_stats_on(api);
  EXPECT_TRUE(has(api_out.out, "cuLaunchKernel")) << api_out.out;
  EXPECT_FALSE(has(api_out.out, "pthread_cond_wait")) << api_out.out;
}

TEST(CpuOutputs, StatsCpuDuringGpuIdleKeepsOnlyWhatFellInTheGaps) {
  auto tables = cpu_tables(cpu_trace(false, "cpu_idle.trace"), "gpu-idle");
  const auto& functions = tables["CPU samples by function"];
  EXPECT_EQ(row_of(functions, "1", "Function", "forward (train.py)"), nullptr)
      << "sampled at 0.5 ms while the first kernel ran";
  const JsonValue* scan = row_of(functions, "1", "Function", "json_scan");
  ASSERT_NE(scan, nullptr);
  EXPECT_EQ((*scan)["Self %"].str(), "100.0") << "the 6 json samples are all main has in the gap";
  const JsonValue* decode = row_of(functions, "3", "Function", "decode (data.py)");
  ASSERT_NE(decode, nullptr) << "the loader launched nothing: its process's device counts";
  EXPECT_EQ((*decode)["Self"].str(), "10");
  const auto& waits = tables["Time blocked by call site"];
  EXPECT_EQ(row_of(waits, "1", "Call site", "nanosleep"), nullptr) << "after the last GPU work: no gap";
  const JsonValue* cond =
      row_of(waits, "1", "Call site", "pthread_cond_wait (condition variable) in Queue.get at train.py:41");
  ASSERT_NE(cond, nullptr);
  EXPECT_EQ((*cond)["Blocked (ns)"].str(), "20000000");
}

TEST(CpuOutputs, StatsCpuStepKeepsOneStep) {
  const std::string trace = cpu_trace(true, "cpu_steps.trace");
  std::string text;
  auto tables = cpu_tables(trace, "", 2, &text);
  const auto& functions = tables["CPU samples by function"];
  const JsonValue* scan = row_of(functions, "1", "Function", "json_scan");
  ASSERT_NE(scan, nullptr) << text;
  EXPECT_EQ((*scan)["Self"].str(), "6");
  EXPECT_EQ(row_of(functions, "1", "Function", "forward (train.py)"), nullptr) << "step 1's";
  EXPECT_EQ(row_of(functions, "3", "Function", "decode (data.py)"), nullptr) << "step 1's";
  const JsonValue* cond =
      row_of(tables["Time blocked by call site"], "1", "Call site",
             "pthread_cond_wait (condition variable) in Queue.get at train.py:41");
  ASSERT_NE(cond, nullptr) << text;
  EXPECT_EQ((*cond)["Blocked (ns)"].str(), "6999900") << "its part after step 2 began (the push returned at 15 ms + 100 ns)";

  auto first = cpu_tables(trace, "", 1);
  EXPECT_NE(row_of(first["CPU samples by function"], "3", "Function", "decode (data.py)"), nullptr);
  EXPECT_EQ(row_of(first["CPU samples by function"], "1", "Function", "json_scan"), nullptr);
}

TEST(CpuOutputs, TracesWithoutSamplesPrintNoCpuTable) {
  TraceBuilder trace;
  trace.process(kSection, {.pid = 7});
  trace.api(kSection, "cuInit", ApiDomain::kDriver);
  tools::StatsCommand command;
  command.inputs = {write_trace(trace, "no_cpu.trace")};
  command.sections = {"cpu"};
  const CommandOutput out = run_stats_on(command);
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.out, "");
}

TEST(CpuOutputs, IdleGapRuleNamesWhatTheThreadsDidInSharesOfTheGap) {
  tools::StatsCommand command;
  command.inputs = {cpu_trace(false, "cpu_rule.trace")};
  command.sections = {"recommendations"};
  command.json = true;
  const CommandOutput out = run_stats_on(command);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  std::string error;
  const auto document = parse_json(out.out, &error);
  ASSERT_TRUE(document.has_value()) << error;
  std::string finding;
  for (const JsonValue& table : (*document)["tables"].items)
    for (const JsonValue& row : table["rows"].items)
      if (row["Rule"].str() == "gpu-idle-gap") finding = row["Finding"].str();
  EXPECT_TRUE(has(finding, "the longest, 29.010 ms on device 0 of pid 7")) << finding;
  // 20 ms of 29.01 blocked, 6 samples x 1 ms in json; the loader's 10.
  EXPECT_TRUE(has(finding,
                  "In it, from CPU samples and blocking calls: the launching thread spent 20.000 ms (68.9%) blocked "
                  "in pthread_cond_wait (condition variable) in Queue.get at train.py:41, 6.000 ms (20.7%) in "
                  "loads at data.py:17; 3.010 ms (10.4%) neither sampled nor blocked"))
      << finding;
  EXPECT_TRUE(has(finding, "tid 3 \"loader\" ran 10.000 ms (34.5%) in decode at data.py:17")) << finding;
}

TEST(CpuOutputs, JsonTimelineHasSamplesAsInstantsAndWaitsAsSlices) {
  tools::ConvertCommand command;
  ConvertedTrace out = convert_files({cpu_trace(false, "cpu_json.trace")}, command);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  std::vector<const JsonValue*> samples;
  for (const JsonValue* e : out.events)
    if ((*e)["ph"].str() == "i" && (*e)["cat"].str() == "cpu_sample") samples.push_back(e);
  ASSERT_EQ(samples.size(), 17u);
  size_t json_samples = 0, loader_samples = 0;
  for (const JsonValue* e : samples) {
    EXPECT_EQ((*e)["s"].str(), "t") << "thread-scoped";
    EXPECT_EQ((*e)["pid"].as_double(), 7);
    const std::string stack = (*e)["args"]["stack"].str();
    if ((*e)["tid"].as_double() == kLoader) {
      ++loader_samples;
      EXPECT_EQ(stack, "/home/me/loader.py:30 produce\n/home/me/data.py:17 decode");
    } else if (has(stack, "json_scan")) {
      ++json_samples;
      EXPECT_EQ(stack,
                "/home/me/train.py:44 main\n/home/me/data.py:17 parse\n/usr/lib/python3.11/json/__init__.py:346 "
                "loads\njson_scan (scan.c:5)")
          << "root first, the running frame last, no API leaf";
    }
  }
  EXPECT_EQ(json_samples, 6u);
  EXPECT_EQ(loader_samples, 10u);
  const JsonValue* cond = out.slice_named("pthread_cond_wait (condition variable 0xabc0)");
  ASSERT_NE(cond, nullptr);
  EXPECT_EQ((*cond)["cat"].str(), "os_runtime");
  EXPECT_EQ((*cond)["tid"].as_double(), kMain);
  EXPECT_EQ((*cond)["dur"].as_double(), 20000);
  EXPECT_EQ((*cond)["args"]["waited_on"].str(), "condition variable");
  EXPECT_EQ((*cond)["args"]["stack"].str(),
            "/home/me/train.py:41 main\n/usr/lib/python3.11/queue.py:180 Queue.get\n"
            "/usr/lib/python3.11/threading.py:320 Condition.wait\npthread_cond_wait");
  const JsonValue* read = out.slice_named("read (pipe fd 5)");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ((*read)["args"]["object"].as_double(), 5);
  ASSERT_NE(out.slice_named("nanosleep"), nullptr);
  std::string checker;
  EXPECT_EQ(run_checker(out.json_path, &checker), 0) << checker;
  // Still a trace the PyTorch profiler's readers (HTA, TensorBoard) take.
  const CommandOutput kineto = run_shell(std::string(PROFLAUNCH_PYTHON3) + " " + KINETO_CHECKER + " " + out.json_path);
  EXPECT_EQ(kineto.exit_code, 0) << kineto.out << kineto.err;
}

// Every row of `sql` joined by ';' (cells by ','), NULL as "NULL".
std::string sql_rows(const std::string& database, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string out;
  if (sqlite3_open_v2(database.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << sqlite3_errmsg(db);
    sqlite3_close(db);
    return out;
  }
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
  } else {
    while (sqlite3_step(statement) == SQLITE_ROW) {
      if (!out.empty()) out += ";";
      for (int c = 0; c < sqlite3_column_count(statement); ++c) {
        const auto* text = sqlite3_column_text(statement, c);
        out += (c == 0 ? "" : ",") + std::string(text != nullptr ? reinterpret_cast<const char*>(text) : "NULL");
      }
    }
  }
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return out;
}

TEST(CpuOutputs, SqlTablesHoldSamplesAndWaitsWithTheirStacks) {
  tools::ExportCommand command;
  command.inputs = {cpu_trace(false, "cpu_sql.trace")};
  command.sqlite = temp_path("cpu.sqlite");
  command.quiet = true;
  ASSERT_EQ(tools::run_export(command, stderr), 0);
  const std::string& db = command.sqlite;
  EXPECT_EQ(sql_rows(db, "SELECT t.tid, count(*) FROM cpu_samples s JOIN threads t ON t.id = s.thread_id "
                         "GROUP BY t.tid ORDER BY t.tid"),
            "1,7;3,10");
  // The running frame of each sample is depth 0.
  EXPECT_EQ(sql_rows(db, "SELECT f.name, count(*) FROM cpu_samples s JOIN stack_frames sf ON sf.stack_id = s.stack_id "
                         "AND sf.depth = 0 JOIN frames f ON f.id = sf.frame_id GROUP BY f.name ORDER BY 2 DESC"),
            "/home/me/data.py:17 decode,10;json_scan (scan.c:5),6;/home/me/train.py:50 forward,1");
  EXPECT_EQ(sql_rows(db, "SELECT thread_cpu_ns FROM cpu_samples ORDER BY time_ns LIMIT 1"), "505000");
  EXPECT_EQ(sql_rows(db, "SELECT a.name, a.domain, b.end_ns - b.begin_ns, b.object_kind, b.object, "
                         "(SELECT group_concat(f.name, ' < ') FROM stack_frames sf JOIN frames f ON f.id = sf.frame_id "
                         "WHERE sf.stack_id = b.stack_id ORDER BY sf.depth) "
                         "FROM blocking_calls b JOIN apis a ON a.id = b.api_id ORDER BY b.begin_ns"),
            "pthread_cond_wait,os_runtime,20000000,condition variable,43968,"
            "/usr/lib/python3.11/threading.py:320 Condition.wait < /usr/lib/python3.11/queue.py:180 Queue.get < "
            "/home/me/train.py:41 main;"
            "read,os_runtime,2000000,pipe,5,NULL;nanosleep,os_runtime,500000,sleep,0,NULL");
  EXPECT_EQ(sql_rows(db, "SELECT hz, mechanism, state, signal_number FROM cpu_sampling"), "1000,thread_cpu_timer,on,34");
}

// The report's CPU tab: its data, and (when a headless Chromium is here)
// the page as a browser draws it: the flame graph's frames and the split of
// the launching thread's GPU idle time.
TEST(CpuOutputs, ReportHasACpuTabWithAFlameGraphAndTheIdleSplit) {
  tools::ReportCommand command;
  command.inputs = {cpu_trace(false, "cpu_report.trace")};
  command.output = temp_path("report.html");
  command.json = temp_path("report.json");
  command.quiet = true;
  ASSERT_EQ(tools::run_report(command, stderr), 0);
  std::string error;
  const CommandOutput json = run_shell("cat " + command.json);
  const auto document = parse_json(json.out, &error);
  ASSERT_TRUE(document.has_value()) << error << json.out.substr(json.out.rfind("\"cpu\": {"), 3000);
  const JsonValue& cpu = (*document)["cpu"];
  ASSERT_TRUE(cpu.is_object());
  EXPECT_EQ(cpu["samples"].items.size(), 17u);
  EXPECT_EQ(cpu["waits"].items.size(), 3u);
  ASSERT_EQ(cpu["idle_split"].items.size(), 1u);
  const JsonValue& split = cpu["idle_split"].items[0];
  EXPECT_EQ(split["tid"].as_int(), kMain);
  EXPECT_EQ(split["idle_ns"].as_int(), 29'010'000);
  EXPECT_EQ(split["blocked_ns"].as_int(), 20'000'000);
  EXPECT_EQ(split["native_ns"].as_int(), 6'000'000) << "json_scan, a native frame, was running";
  EXPECT_EQ(split["python_ns"].as_int(), 0);
  EXPECT_EQ(split["unaccounted_ns"].as_int(), 3'010'000);

  const CommandOutput chromium = run_shell("command -v chromium");
  if (chromium.exit_code != 0) GTEST_SKIP() << "no chromium: the page itself is not drawn";
  const CommandOutput dom = run_shell("timeout 60 chromium --headless --no-sandbox --disable-gpu --virtual-time-budget=5000 "
                                      "--dump-dom 'file://" + command.output + "#cpu' 2>/dev/null");
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  EXPECT_TRUE(has(dom.out, "data-report-ready=\"true\"")) << "the script ran to its end";
  EXPECT_TRUE(has(dom.out, "data-frame=\"json_scan (scan.c:5)\" data-ns=\"6000000\"")) << dom.out.substr(0, 4000);
  EXPECT_TRUE(has(dom.out, "data-frame=\"/home/me/data.py:17 decode\" data-ns=\"10000000\""));
  EXPECT_TRUE(has(dom.out, "17 samples (17.00 ms of CPU time), 3 blocking calls (22.50 ms blocked)"));
  EXPECT_TRUE(has(dom.out, "data-key=\"blocked_ns\">20.00 ms (68.9 %)"));
}

#ifdef TRACE_PROCESSOR
// Perfetto's importer on the protobuf: samples land in perf_sample with
// their frames, waits are slices.
TEST(CpuOutputs, ProtobufSamplesLandInPerfettosProfileTables) {
  tools::ConvertCommand command;
  command.inputs = {cpu_trace(false, "cpu_pb.trace")};
  command.output = temp_path("cpu.pftrace");
  command.quiet = true;
  ASSERT_EQ(tools::run_convert(command, stderr), 0);
  auto query = [&](const std::string& sql) {
    const std::string file = temp_path("q.sql");
    FILE* f = std::fopen(file.c_str(), "w");
    std::fputs(sql.c_str(), f);
    std::fclose(f);
    const CommandOutput out = run_shell(std::string(TRACE_PROCESSOR) + " -q " + file + " " + command.output);
    EXPECT_EQ(out.exit_code, 0) << out.err;
    return out.out;
  };
  EXPECT_EQ(query("select t.tid, count(*) as n from perf_sample s join thread t using(utid) group by t.tid "
                  "order by t.tid;"),
            "\"tid\",\"n\"\n1,7\n3,10\n");
  EXPECT_EQ(query("select f.name, count(*) as n from perf_sample s join stack_profile_callsite c on "
                  "s.callsite_id = c.id join stack_profile_frame f on c.frame_id = f.id group by f.name "
                  "order by n desc;"),
            "\"name\",\"n\"\n\"/home/me/data.py:17 decode\",10\n\"json_scan (scan.c:5)\",6\n"
            "\"/home/me/train.py:50 forward\",1\n");
  // The json samples' stack, leaf to root.
  EXPECT_EQ(query("select f.name from perf_sample s join experimental_ancestor_stack_profile_callsite(s.callsite_id) "
                  "a join stack_profile_frame f on a.frame_id = f.id where s.id = (select min(p.id) from perf_sample "
                  "p join stack_profile_callsite c on p.callsite_id = c.id join stack_profile_frame f on "
                  "c.frame_id = f.id where f.name = 'json_scan (scan.c:5)') order by a.depth desc;"),
            "\"name\"\n\"/usr/lib/python3.11/json/__init__.py:346 loads\"\n\"/home/me/data.py:17 parse\"\n"
            "\"/home/me/train.py:44 main\"\n");
  // Samples and slices on one clock: the wait began 1.5 ms after the first sample.
  EXPECT_EQ(query("select (select ts from slice where name like 'pthread_cond_wait%') - (select min(ts) from "
                  "perf_sample) as d;"),
            "\"d\"\n1500000\n");
  EXPECT_EQ(query("select s.name, s.dur from slice s where s.category = 'os_runtime' order by s.ts;"),
            "\"name\",\"dur\"\n\"pthread_cond_wait (condition variable 0xabc0)\",20000000\n"
            "\"read (pipe fd 5)\",2000000\n\"nanosleep\",500000\n");
  EXPECT_EQ(query("select name, value from stats where value > 0 and severity in ('error', 'data_loss');"),
            "\"name\",\"value\"\n");
  // The project's own checks of the protobuf against the importer's rules and
  // the JSON of the same trace.
  tools::ConvertCommand json_command;
  json_command.inputs = command.inputs;
  json_command.output = temp_path("cpu.json");
  json_command.quiet = true;
  ASSERT_EQ(tools::run_convert(json_command, stderr), 0);
  const CommandOutput check = run_shell(std::string(PROFLAUNCH_PYTHON3) + " " + PFTRACE_CHECKER + " " +
                                        command.output + " --json " + json_command.output);
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}
#endif

}  // namespace
}  // namespace proflaunch::testing
