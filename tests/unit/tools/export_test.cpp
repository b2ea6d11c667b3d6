// proftrace export --sqlite: hand-built traces whose every row is known,
// read back with SQL: the rows, the ids that join them, the GPU time joined
// by correlation id, NVTX pairing, call stacks, and the unhappy paths
// (existing output, missing input, damaged input).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstring>
#include <filesystem>
#include <span>

#include "tests/unit/tools/tool_fixture.h"
#include "tests/unit/tools/trace_scenarios.h"

namespace proflaunch::testing {
namespace {

using namespace proflaunch::format;

constexpr uint64_t kStart = 1'000'000'000;
constexpr uint32_t kMainTid = 100;
constexpr uint32_t kWorkerTid = 101;

using Rows = std::vector<std::vector<std::string>>;

// Every row of `sql`, each cell as text ("NULL" for NULL).
Rows query(const std::string& database, const std::string& sql) {
  sqlite3* db = nullptr;
  Rows rows;
  if (sqlite3_open_v2(database.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << "cannot open " << database << ": " << sqlite3_errmsg(db);
    sqlite3_close(db);
    return rows;
  }
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
  } else {
    while (sqlite3_step(statement) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int c = 0; c < sqlite3_column_count(statement); ++c) {
        const auto* text = sqlite3_column_text(statement, c);
        row.push_back(text != nullptr ? reinterpret_cast<const char*>(text) : "NULL");
      }
      rows.push_back(row);
    }
  }
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return rows;
}

std::string one(const std::string& database, const std::string& sql) {
  const Rows rows = query(database, sql);
  if (rows.size() != 1 || rows[0].size() != 1) {
    ADD_FAILURE() << sql << ": expected one value, got " << rows.size() << " rows";
    return "";
  }
  return rows[0][0];
}

CommandOutput run_export_on(tools::ExportCommand command) {
  std::FILE* err = std::tmpfile();
  CommandOutput result;
  result.exit_code = tools::run_export(command, err);
  std::rewind(err);
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, err)) > 0) result.err.append(buffer, n);
  std::fclose(err);
  return result;
}

std::span<const uint8_t> text_bytes(const std::string& text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

NvtxEventRecord nvtx(NvtxEventType type, uint64_t range_id, uint64_t at_ns, uint16_t api) {
  NvtxEventRecord record{};
  record.type = static_cast<uint8_t>(type);
  const bool named = type == NvtxEventType::kStart || type == NvtxEventType::kPush;
  record.message_type = static_cast<uint8_t>(named ? NvtxMessageType::kInline : NvtxMessageType::kNone);
  record.span = ApiSpan{at_ns, at_ns + 10, 0, 0, api, 0};
  record.range_id = range_id;
  return record;
}

// A native stack of two return addresses (innermost first), the inner one
// named by an embedded symbol.
void define_stack(TraceBuilder& trace, uint64_t section) {
  NativeStackDefRecord stack{};
  stack.header = header_for<NativeStackDefRecord>();
  stack.header.bytes = static_cast<uint16_t>(sizeof stack + 16);
  stack.id = 1;
  stack.frame_count = 2;
  std::vector<uint8_t> bytes(sizeof stack + 16, 0);
  std::memcpy(bytes.data(), &stack, sizeof stack);
  const uint64_t pcs[2] = {0x401000, 0x402000};
  std::memcpy(bytes.data() + sizeof stack, pcs, sizeof pcs);
  trace.raw_record(section, ChunkKind::kDefinitions, bytes);
  SymbolDefRecord symbol{};
  symbol.function_string = trace.string(section, "train_step");
  symbol.address = 0x401000;
  symbol.file_string = trace.string(section, "train.cpp");
  symbol.line = 42;
  trace.define(section, symbol);
  symbol.function_string = trace.string(section, "main");
  symbol.address = 0x402000;
  symbol.line = 7;
  trace.define(section, symbol);
}

// One process, two threads, one device: every kind of row the export writes
// from a single-GPU run, with numbers the assertions know.
std::string full_trace() {
  TraceBuilder trace;
  TracedProcess p = add_process(trace, 1, 4242, kStart);
  trace.thread(1, kMainTid, "main");
  trace.thread(1, kWorkerTid, "loader");
  DeviceSpec device;
  device.ordinal = 0;
  device.name = "Sim GPU";
  device.multiprocessor_count = 108;
  device.total_memory_bytes = 80ull << 30;
  trace.device(1, device);
  trace.function(1, 0xA, "_Z4gemmPf", kStart);
  trace.function(1, 0xB, "relu_kernel", kStart);
  const uint16_t push_api = trace.api(1, "nvtxRangePushA", ApiDomain::kAnnotation);
  const uint16_t pop_api = trace.api(1, "nvtxRangePop", ApiDomain::kAnnotation);
  const uint16_t start_api = trace.api(1, "nvtxRangeStartA", ApiDomain::kAnnotation);
  const uint16_t end_api = trace.api(1, "nvtxRangeEnd", ApiDomain::kAnnotation);
  const uint16_t get_api = trace.api(1, "cuCtxGetCurrent", ApiDomain::kDriver);
  define_stack(trace, 1);

  // NVTX: "step" pushed around everything on main; "epoch" started on main
  // and ended on the worker; "left open" never popped.
  trace.event_with_tail(1, kMainTid, nvtx(NvtxEventType::kStart, 9, kStart + 10, start_api), text_bytes("epoch"));
  trace.event_with_tail(1, kMainTid, nvtx(NvtxEventType::kPush, 0, kStart + 100, push_api), text_bytes("step"));
  // gemm twice (GPU 100 and 300 ns; the second activity read before its
  // launch), relu once without GPU time.
  trace.event(1, kMainTid, launch(p, 1, kStart + 1000, kStart + 1050, 0xA, kStreamLegacy));
  CallStackRecord call_stack{};
  call_stack.point = static_cast<uint8_t>(StackPoint::kLaunch);
  call_stack.correlation_id = 1;
  call_stack.native_stack = 1;
  trace.event(1, kMainTid, call_stack);
  trace.event(1, kMainTid, activity(1, kStart + 1100, kStart + 1200, kStreamLegacy, GpuActivityKind::kKernel));
  trace.event(1, kMainTid, activity(2, kStart + 2100, kStart + 2400, kStreamLegacy, GpuActivityKind::kKernel));
  trace.event(1, kMainTid, launch(p, 2, kStart + 2000, kStart + 2040, 0xA, kStreamLegacy));
  trace.event(1, kMainTid, launch(p, 3, kStart + 3000, kStart + 3030, 0xB, 0x5000));
  trace.event(1, kMainTid, copy(p, 4, kStart + 4000, kStart + 4100, 1 << 20, kStreamLegacy));
  trace.event(1, kMainTid, activity(4, kStart + 4200, kStart + 5200, kStreamLegacy, GpuActivityKind::kMemoryCopy));
  trace.event(1, kMainTid, memset(p, 5, kStart + 6000, kStart + 6020, 4096, kStreamLegacy));
  MemoryOperationRecord alloc{};
  alloc.device = 0;
  alloc.span = ApiSpan{kStart + 7000, kStart + 7500, 6, 0, p.malloc_api, 0};
  alloc.address = 0x7f0000000000;
  alloc.bytes = 1 << 24;
  alloc.kind = static_cast<uint8_t>(AllocationKind::kDevice);
  alloc.action = static_cast<uint8_t>(MemoryAction::kAcquire);
  alloc.pool_reserved_bytes = kPoolReservedUnknown;
  trace.event(1, kMainTid, alloc);
  ApiCountRecord counted{};
  counted.api = get_api;
  counted.count = 17;
  counted.first_ns = kStart + 100;
  counted.last_ns = kStart + 7000;
  trace.event(1, kMainTid, counted);
  trace.event(1, kMainTid, nvtx(NvtxEventType::kPop, 0, kStart + 8000, pop_api));
  trace.event(1, kWorkerTid, nvtx(NvtxEventType::kEnd, 9, kStart + 9000, end_api));
  trace.event_with_tail(1, kWorkerTid, nvtx(NvtxEventType::kPush, 0, kStart + 9500, push_api), text_bytes("left open"));
  LostRecord lost{};
  lost.reason = static_cast<uint32_t>(LostReason::kBufferFull);
  lost.first_ns = kStart + 9600;
  lost.last_ns = kStart + 9700;
  lost.count = 3;
  trace.event(1, kWorkerTid, lost);
  trace.section_end(1, kStart + 10000, 20, 3);
  return write_trace(trace, "full.trace");
}

std::string export_trace(const std::string& trace, const std::string& name = "out.sqlite") {
  tools::ExportCommand command;
  command.inputs = {trace};
  command.sqlite = temp_path(name);
  const CommandOutput result = run_export_on(command);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return command.sqlite;
}

TEST(Export, ProcessesThreadsAndDevicesJoin) {
  const std::string db = export_trace(full_trace());
  EXPECT_EQ(query(db, "SELECT pid, host, command_line, start_ns, end_ns, records_dropped FROM processes"),
            (Rows{{"4242", "node1", "python train.py", std::to_string(kStart), std::to_string(kStart + 10000), "3"}}));
  EXPECT_EQ(query(db, "SELECT t.tid, t.name, p.pid FROM threads t JOIN processes p ON p.id = t.process_id ORDER BY t.tid"),
            (Rows{{"100", "main", "4242"}, {"101", "loader", "4242"}}));
  EXPECT_EQ(query(db, "SELECT device, name, multiprocessor_count, total_memory_bytes FROM devices"),
            (Rows{{"0", "Sim GPU", "108", std::to_string(80ull << 30)}}));
  // Every kernel's device_id points at that device.
  EXPECT_EQ(one(db, "SELECT count(*) FROM kernels k JOIN devices d ON d.id = k.device_id AND d.device = k.device"), "3");
}

TEST(Export, ApiCallsCarryTheirDetailsInTablesThatJoinBack) {
  const std::string db = export_trace(full_trace());
  // Every record with an ApiSpan is one call: 3 launches, copy, memset,
  // cudaMalloc, and 6 NVTX calls.
  EXPECT_EQ(query(db, "SELECT a.name, c.record, count(*) FROM api_calls c JOIN apis a ON a.id = c.api_id "
                      "GROUP BY a.name, c.record ORDER BY a.name"),
            (Rows{{"cuLaunchKernel", "kernel_launch", "3"},
                  {"cudaMalloc", "memory", "1"},
                  {"cudaMemcpyAsync", "memcpy", "1"},
                  {"cudaMemsetAsync", "memset", "1"},
                  {"nvtxRangeEnd", "nvtx", "1"},
                  {"nvtxRangePop", "nvtx", "1"},
                  {"nvtxRangePushA", "nvtx", "2"},
                  {"nvtxRangeStartA", "nvtx", "1"}}));
  EXPECT_EQ(query(db, "SELECT f.name, f.mangled_name, c.begin_ns - " + std::to_string(kStart) +
                          ", k.grid_x, k.block_x, k.shared_bytes, t.name "
                          "FROM kernels k JOIN api_calls c ON c.id = k.api_call_id "
                          "JOIN functions f ON f.id = k.function_id JOIN threads t ON t.id = c.thread_id ORDER BY c.begin_ns"),
            (Rows{{"gemm(float*)", "_Z4gemmPf", "1000", "64", "256", "1024", "main"},
                  {"gemm(float*)", "_Z4gemmPf", "2000", "64", "256", "1024", "main"},
                  {"relu_kernel", "relu_kernel", "3000", "64", "256", "1024", "main"}}));
  EXPECT_EQ(query(db, "SELECT c.bytes, c.direction, c.src_kind, c.dst_kind, a.correlation_id FROM copies c "
                      "JOIN api_calls a ON a.id = c.api_call_id"),
            (Rows{{std::to_string(1 << 20), "HtoD", "pinned", "device", "4"}}));
  EXPECT_EQ(query(db, "SELECT m.bytes, a.correlation_id FROM memsets m JOIN api_calls a ON a.id = m.api_call_id"),
            (Rows{{"4096", "5"}}));
  EXPECT_EQ(query(db, "SELECT m.kind, m.action, m.bytes, m.address, a.end_ns - a.begin_ns FROM memory_operations m "
                      "JOIN api_calls a ON a.id = m.api_call_id"),
            (Rows{{"device", "acquire", std::to_string(1 << 24), std::to_string(0x7f0000000000), "500"}}));
  EXPECT_EQ(query(db, "SELECT a.name, c.count, t.name FROM api_counts c JOIN apis a ON a.id = c.api_id "
                      "JOIN threads t ON t.id = c.thread_id"),
            (Rows{{"cuCtxGetCurrent", "17", "main"}}));
  EXPECT_EQ(query(db, "SELECT reason, count, t.name FROM lost l JOIN threads t ON t.id = l.thread_id"),
            (Rows{{"buffer full", "3", "loader"}}));
}

TEST(Export, GpuTimeJoinsByCorrelationIdWhicheverCameFirst) {
  const std::string db = export_trace(full_trace());
  // The second gemm's activity preceded its launch in the file; relu has none.
  EXPECT_EQ(query(db, "SELECT f.name, count(*), sum(gpu_duration_ns) FROM kernels_with_gpu_time k "
                      "JOIN functions f ON f.id = k.function_id GROUP BY f.name"),
            (Rows{{"gemm(float*)", "2", "400"}}));
  EXPECT_EQ(query(db, "SELECT bytes, gpu_duration_ns FROM copies_with_gpu_time"),
            (Rows{{std::to_string(1 << 20), "1000"}}));
  EXPECT_EQ(one(db, "SELECT count(*) FROM memsets_with_gpu_time"), "0") << "the memset had no GPU activity";
  EXPECT_EQ(one(db, "SELECT count(*) FROM gpu_activities"), "3");
}

// A graph launch timed node by node (CUPTI): each node's GpuActivity names
// its GraphNode, and graph_kernels_with_gpu_time gives the node's kernel and
// shape with its GPU time (kernels_with_gpu_time has only launched kernels).
TEST(Export, KernelsOfGraphLaunchesTimedNodeByNodeHaveTheirNodesNames) {
  TraceBuilder trace;
  TracedProcess p = add_process(trace, 1, kMainTid, kStart);
  const uint16_t graph_launch_api = trace.api(1, "cuGraphLaunch", ApiDomain::kDriver);
  trace.function(1, 0xA, "_Z4gemmPf", kStart);
  for (uint64_t node : {0x100, 0x101}) {
    GraphNodeRecord record{};
    record.type = static_cast<uint8_t>(node == 0x100 ? GraphNodeType::kKernel : GraphNodeType::kMemset);
    record.graph_exec = 0x7000;
    record.graph = 0x6000;
    record.node = node;
    record.function = node == 0x100 ? 0xA : 0;
    record.grid = {8, 1, 1};
    record.block = {256, 1, 1};
    record.bytes = node == 0x101 ? 4096 : 0;
    record.device = -1;
    trace.event(1, kMainTid, record);
  }
  for (uint64_t i = 0; i < 2; ++i) {
    GraphLaunchRecord launch_record{};
    launch_record.span = ApiSpan{kStart + 1000 + i * 1000, kStart + 1100 + i * 1000, 0, 0, graph_launch_api, 0};
    launch_record.span.correlation_id = 10 + i;
    launch_record.graph_exec = 0x7000;
    trace.event(1, kMainTid, launch_record);
    GpuActivityRecord kernel = activity(10 + i, kStart + 1200 + i * 1000, kStart + 1500 + i * 1000, 0x5000,
                                        GpuActivityKind::kKernel);
    kernel.graph_node = 0x100;
    trace.event(1, kMainTid, kernel);
    GpuActivityRecord set = activity(10 + i, kStart + 1500 + i * 1000, kStart + 1550 + i * 1000, 0x5000,
                                     GpuActivityKind::kMemorySet);
    set.graph_node = 0x101;
    trace.event(1, kMainTid, set);
  }
  (void)p;
  const std::string db = export_trace(write_trace(trace, "graph-nodes.trace"));
  EXPECT_EQ(query(db, "SELECT node, type, grid_x, block_x, bytes FROM graph_nodes ORDER BY node"),
            (Rows{{"256", "kernel", "8", "256", "NULL"}, {"257", "memset", "NULL", "NULL", "4096"}}));
  EXPECT_EQ(query(db, "SELECT f.name, count(*), sum(gpu_duration_ns), min(correlation_id) FROM graph_kernels_with_gpu_time k "
                      "JOIN functions f ON f.id = k.function_id GROUP BY f.name"),
            (Rows{{"gemm(float*)", "2", "600", "10"}}));
  EXPECT_EQ(one(db, "SELECT count(*) FROM kernels_with_gpu_time"), "0") << "no kernel was launched by itself";
}

TEST(Export, NvtxRangesArePairedAndOpenOnesHaveNoEnd) {
  const std::string db = export_trace(full_trace());
  // push/pop from the push's return to the pop's call; start/end across
  // threads on the starting thread; the range never popped has no end.
  EXPECT_EQ(query(db, "SELECT r.kind, r.name, r.begin_ns - " + std::to_string(kStart) + ", r.end_ns - " +
                          std::to_string(kStart) + ", t.name FROM nvtx_ranges r JOIN threads t ON t.id = r.thread_id "
                          "ORDER BY r.begin_ns"),
            (Rows{{"start", "epoch", "20", "9000", "main"},
                  {"push", "step", "110", "8000", "main"},
                  {"push", "left open", "9510", "NULL", "loader"}}));
}

TEST(Export, CallStacksAreFramesInnermostFirst) {
  const std::string db = export_trace(full_trace());
  const Rows frames = query(db, "SELECT sf.depth, f.name FROM api_calls c JOIN stacks s ON s.id = c.stack_id "
                                "JOIN stack_frames sf ON sf.stack_id = s.id JOIN frames f ON f.id = sf.frame_id "
                                "WHERE c.correlation_id = 1 ORDER BY sf.depth");
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_NE(frames[0][1].find("train_step"), std::string::npos) << frames[0][1];
  EXPECT_NE(frames[0][1].find("train.cpp:42"), std::string::npos) << frames[0][1];
  EXPECT_NE(frames[1][1].find("main"), std::string::npos) << frames[1][1];
  EXPECT_EQ(one(db, "SELECT count(*) FROM api_calls WHERE stack_id IS NOT NULL"), "1")
      << "only the call its CallStack followed";
  EXPECT_EQ(one(db, "SELECT frame_count FROM stacks"), "2");
}

TEST(Export, RefusesAnExistingOutputUnlessForced) {
  const std::string trace = full_trace();
  const std::string output = temp_path("exists.sqlite");
  {
    std::FILE* f = std::fopen(output.c_str(), "w");
    std::fputs("precious", f);
    std::fclose(f);
  }
  tools::ExportCommand command;
  command.inputs = {trace};
  command.sqlite = output;
  const CommandOutput refused = run_export_on(command);
  EXPECT_EQ(refused.exit_code, tools::kExitError);
  EXPECT_NE(refused.err.find("already exists"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--force"), std::string::npos) << refused.err;
  EXPECT_EQ(std::filesystem::file_size(output), 8u) << "the existing file was touched";

  command.force = true;
  const CommandOutput forced = run_export_on(command);
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(one(output, "SELECT count(*) FROM kernels"), "3");
  EXPECT_FALSE(std::filesystem::exists(output + ".partial"));
}

TEST(Export, AMissingInputIsAnErrorThatNamesItAndWritesNothing) {
  tools::ExportCommand command;
  command.inputs = {temp_path("nope.trace")};
  command.sqlite = temp_path("nothing.sqlite");
  const CommandOutput result = run_export_on(command);
  EXPECT_EQ(result.exit_code, tools::kExitError);
  EXPECT_NE(result.err.find("nope.trace"), std::string::npos) << result.err;
  EXPECT_FALSE(std::filesystem::exists(command.sqlite));
  EXPECT_FALSE(std::filesystem::exists(command.sqlite + ".partial"));
}

TEST(Export, ADamagedInputIsExportedFromWhatWasIntact) {
  TraceBuilder trace;
  TracedProcess p = add_process(trace, 1, 100, kStart);
  trace.function(1, 0xA, "k", kStart);
  for (uint64_t i = 1; i <= 4; ++i) {
    trace.event(1, kMainTid, launch(p, i, kStart + i * 1000, kStart + i * 1000 + 50, 0xA, kStreamLegacy));
    trace.flush();  // one Events chunk per launch
  }
  std::vector<uint8_t> bytes = trace.bytes();
  const auto& last = trace.chunks().back();
  ASSERT_EQ(last.kind, ChunkKind::kEvents);
  bytes.resize(last.offset + last.bytes / 2);  // cut inside the last launch's chunk
  const std::string path = temp_path("cut.trace");
  std::FILE* f = std::fopen(path.c_str(), "wb");
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);

  tools::ExportCommand command;
  command.inputs = {path};
  command.sqlite = temp_path("cut.sqlite");
  const CommandOutput result = run_export_on(command);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("damaged input"), std::string::npos) << result.err;
  EXPECT_EQ(query(command.sqlite, "SELECT correlation_id FROM kernels ORDER BY correlation_id"),
            (Rows{{"1"}, {"2"}, {"3"}}));

  command.strict = true;
  command.force = true;
  const CommandOutput strict = run_export_on(command);
  EXPECT_EQ(strict.exit_code, tools::kExitDamagedInput) << strict.err;
  EXPECT_EQ(one(command.sqlite, "SELECT count(*) FROM kernels"), "3") << "--strict still writes what was intact";
}

TEST(Export, SeveralInputsAreOneDatabase) {
  TraceBuilder first;
  TracedProcess a = add_process(first, 1, 100, kStart);
  first.function(1, 0xA, "k", kStart);
  first.event(1, kMainTid, launch(a, 1, kStart + 10, kStart + 20, 0xA, kStreamLegacy));
  TraceBuilder second;
  TracedProcess b = add_process(second, 2, 200, kStart + 5);
  second.function(2, 0xA, "k", kStart);
  second.event(2, kMainTid, launch(b, 1, kStart + 30, kStart + 40, 0xA, kStreamLegacy));
  second.event(2, kMainTid, activity(1, kStart + 50, kStart + 90, kStreamLegacy, GpuActivityKind::kKernel));
  tools::ExportCommand command;
  command.inputs = {write_trace(first, "a.trace"), write_trace(second, "b.trace")};
  command.sqlite = temp_path("both.sqlite");
  ASSERT_EQ(run_export_on(command).exit_code, 0);
  // One function row for the name both use; the GPU time joins only to the
  // launch of its own process although both have correlation id 1.
  EXPECT_EQ(one(command.sqlite, "SELECT count(*) FROM functions"), "1");
  EXPECT_EQ(query(command.sqlite, "SELECT p.pid, k.gpu_duration_ns FROM kernels_with_gpu_time k "
                                  "JOIN processes p ON p.id = k.process_id"),
            (Rows{{"200", "40"}}));
  EXPECT_EQ(query(command.sqlite, "SELECT pid, input_path LIKE '%a.trace' FROM processes ORDER BY pid"),
            (Rows{{"100", "1"}, {"200", "0"}}));
}

}  // namespace
}  // namespace proflaunch::testing
