// proftrace stats: the memory-operation table (mem-ops) and the launch shape,
// blocks per SM and tensor-core columns of gpu-kernels, from hand-built
// traces whose numbers are known; the JSON output; the GPU-time join's
// window.
#include <gtest/gtest.h>

#include <optional>
#include <sstream>

#include "tests/unit/tools/tool_fixture.h"
#include "tests/unit/tools/trace_scenarios.h"
#include "tools/proftrace/stats/tensor_core_kernels.h"

namespace proflaunch::testing {
namespace {

using namespace proflaunch::format;

constexpr uint64_t kStart = 1'000'000'000;

using Row = std::vector<std::string>;

Row split_csv(const std::string& line) {
  Row cells(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      cells.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (!quoted && c == ',') {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  return cells;
}

// The table whose title contains `title`: its column names, then its rows, by
// column name.
struct CsvTable {
  Row columns;
  std::vector<Row> rows;
  std::string cell(size_t row, const std::string& column) const {
    for (size_t c = 0; c < columns.size(); ++c)
      if (columns[c] == column) return c < rows.at(row).size() ? rows.at(row)[c] : "(short row)";
    return "(no column " + column + ")";
  }
  // The row whose last cell (the name) is `name`, or -1.
  int find(const std::string& name) const {
    for (size_t r = 0; r < rows.size(); ++r)
      if (rows[r].back() == name) return static_cast<int>(r);
    return -1;
  }
};

CsvTable csv_table(const std::string& out, const std::string& title) {
  CsvTable table;
  std::istringstream lines(out);
  bool inside = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# ", 0) == 0) {
      inside = line.find(title) != std::string::npos;
      std::getline(lines, line);
      if (inside) table.columns = split_csv(line);
      continue;
    }
    if (inside && !line.empty()) table.rows.push_back(split_csv(line));
  }
  return table;
}

CommandOutput stats(const std::string& trace, const std::string& section, bool csv = true) {
  tools::StatsCommand command;
  command.inputs = {trace};
  command.csv = csv;
  command.sections = {section};
  return run_stats_on(command);
}

MemoryCopyRecord copy_of(const TracedProcess& p, uint64_t correlation, uint64_t at, uint64_t bytes,
                         CopyDirection direction, MemoryKind src, MemoryKind dst) {
  MemoryCopyRecord record = copy(p, correlation, at, at + 50, bytes, kStreamLegacy);
  record.direction = static_cast<uint8_t>(direction);
  record.src_kind = static_cast<uint8_t>(src);
  record.dst_kind = static_cast<uint8_t>(dst);
  return record;
}

GpuActivityRecord copy_time(uint64_t correlation, uint64_t start, uint64_t ns) {
  return activity(correlation, start, start + ns, kStreamLegacy, GpuActivityKind::kMemoryCopy);
}

// Pinned HtoD: 2,000,000 B in 1000 ns and 1,000,000 B in 500 ns (its
// activity before its call); pageable HtoD: 4096 B in 100 ns; pinned DtoH:
// 8 B in 400 ns; a 1 MiB memset whose GPU time never came; a failed copy;
// a captured copy (a graph node, not run by the call).
std::string memory_trace() {
  TraceBuilder trace;
  TracedProcess p = add_process(trace, 1, 100, kStart);
  const auto pinned = MemoryKind::kPinnedHost, device = MemoryKind::kDevice;
  trace.event(1, 100, copy_of(p, 1, kStart + 1000, 2'000'000, CopyDirection::kHostToDevice, pinned, device));
  trace.event(1, 100, copy_time(1, kStart + 1100, 1000));
  trace.event(1, 100, copy_time(2, kStart + 3100, 500));
  trace.event(1, 100, copy_of(p, 2, kStart + 3000, 1'000'000, CopyDirection::kHostToDevice, pinned, device));
  trace.event(1, 100, copy_of(p, 3, kStart + 5000, 4096, CopyDirection::kHostToDevice, MemoryKind::kPageableHost,
                              device));
  trace.event(1, 100, copy_time(3, kStart + 5100, 100));
  trace.event(1, 100, copy_of(p, 4, kStart + 7000, 8, CopyDirection::kDeviceToHost, device, pinned));
  trace.event(1, 100, copy_time(4, kStart + 7100, 400));
  trace.event(1, 100, memset(p, 5, kStart + 9000, kStart + 9050, 1 << 20, kStreamLegacy));
  MemoryCopyRecord failed = copy_of(p, 6, kStart + 11000, 999, CopyDirection::kHostToDevice, pinned, device);
  failed.span.result = 1;
  trace.event(1, 100, failed);
  MemoryCopyRecord captured = copy_of(p, 7, kStart + 12000, 777, CopyDirection::kHostToDevice, pinned, device);
  captured.span.flags |= kApiCaptured;
  trace.event(1, 100, captured);
  return write_trace(trace, "memory.trace");
}

TEST(StatsMemoryOperations, SumsBytesAndGpuTimePerKindWithBandwidth) {
  const CommandOutput result = stats(memory_trace(), "mem-ops");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const CsvTable table = csv_table(result.out, "Memory operations");
  ASSERT_EQ(table.rows.size(), 4u) << result.out;
  const int h2d = table.find("Memcpy HtoD pinned -> device");
  ASSERT_EQ(h2d, 0) << "the most GPU time first\n" << result.out;
  EXPECT_EQ(table.cell(h2d, "Count"), "2");
  EXPECT_EQ(table.cell(h2d, "Total Time (ns)"), "1500");
  EXPECT_EQ(table.cell(h2d, "Avg (ns)"), "750");
  EXPECT_EQ(table.cell(h2d, "Min (ns)"), "500");
  EXPECT_EQ(table.cell(h2d, "Max (ns)"), "1000");
  EXPECT_EQ(table.cell(h2d, "Total Bytes"), "3000000");
  EXPECT_EQ(table.cell(h2d, "Avg Bytes"), "1500000");
  EXPECT_EQ(table.cell(h2d, "Min Bytes"), "1000000");
  EXPECT_EQ(table.cell(h2d, "Max Bytes"), "2000000");
  EXPECT_EQ(table.cell(h2d, "Bandwidth (GB/s)"), "2000.00");  // 3e6 B / 1500 ns
  EXPECT_EQ(table.cell(h2d, "No GPU Time"), "0");
  EXPECT_EQ(table.cell(h2d, "Time (%)"), "75.0");  // 1500 of 2000 ns

  // Pageable and pinned host memory are different rows.
  const int pageable = table.find("Memcpy HtoD pageable -> device");
  ASSERT_GE(pageable, 0) << result.out;
  EXPECT_EQ(table.cell(pageable, "Total Bytes"), "4096");
  EXPECT_EQ(table.cell(pageable, "Bandwidth (GB/s)"), "40.96");
  EXPECT_EQ(table.cell(pageable, "Time (%)"), "5.0");
  const int d2h = table.find("Memcpy DtoH device -> pinned");
  ASSERT_GE(d2h, 0) << result.out;
  EXPECT_EQ(table.cell(d2h, "Time (%)"), "20.0");
  EXPECT_EQ(table.cell(d2h, "Bandwidth (GB/s)"), "0.02");

  // The shares of the timed rows add up to 100.
  double shares = 0;
  for (size_t r = 0; r < table.rows.size(); ++r)
    if (table.cell(r, "Time (%)") != "-") shares += std::stod(table.cell(r, "Time (%)"));
  EXPECT_NEAR(shares, 100.0, 0.11);
}

TEST(StatsMemoryOperations, AnOperationWithoutGpuTimeIsCountedAsSuch) {
  const std::string trace = memory_trace();
  const CommandOutput csv = stats(trace, "mem-ops");
  const CsvTable table = csv_table(csv.out, "Memory operations");
  const int set = table.find("Memset device");
  ASSERT_GE(set, 0) << csv.out;
  EXPECT_EQ(table.cell(set, "Count"), "1");
  EXPECT_EQ(table.cell(set, "No GPU Time"), "1");
  EXPECT_EQ(table.cell(set, "Total Bytes"), std::to_string(1 << 20));
  EXPECT_EQ(table.cell(set, "Total Time (ns)"), "-");
  EXPECT_EQ(table.cell(set, "Time (%)"), "-");
  EXPECT_EQ(table.cell(set, "Bandwidth (GB/s)"), "-");
  EXPECT_EQ(set, 3) << "untimed rows last";

  const CommandOutput text = stats(trace, "mem-ops", /*csv=*/false);
  EXPECT_NE(text.out.find("1 operations had no GPU time"), std::string::npos) << text.out;
  // The failed copy moved nothing; the captured one ran (if at all) inside a graph launch.
  EXPECT_NE(text.out.find("1 failed calls"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("999"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("777"), std::string::npos) << text.out;
}

TEST(StatsMemoryOperations, NoCopiesNoTable) {
  TraceBuilder trace;
  TracedProcess p = add_process(trace, 1, 100, kStart);
  trace.function(1, 0xA, "k", kStart);
  trace.event(1, 100, launch(p, 1, kStart + 10, kStart + 20, 0xA, kStreamLegacy));
  const CommandOutput result = stats(write_trace(trace, "kernels.trace"), "mem-ops", false);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "");
}

// gemm: 3 launches; 300 ns with grid 64x2x1 (128 blocks), 100 ns with
// 200x1x1; 100 ns again with 64x2x1; on a 100-SM device. A tensor-core
// kernel of 50 ns on a device the trace does not describe.
std::string kernel_shape_trace() {
  TraceBuilder trace;
  TracedProcess p = add_process(trace, 1, 100, kStart);
  DeviceSpec device;
  device.multiprocessor_count = 100;
  trace.device(1, device);
  trace.function(1, 0xA, "_Z4gemmPfi", kStart);
  trace.function(1, 0xB, "cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4", kStart);
  const uint64_t durations[] = {300, 100, 100};
  for (uint64_t i = 0; i < 3; ++i) {
    KernelLaunchRecord record = launch(p, i + 1, kStart + i * 1000, kStart + i * 1000 + 50, 0xA, kStreamLegacy);
    if (i == 1) record.grid = {200, 1, 1};
    trace.event(1, 100, record);
    trace.event(1, 100, activity(i + 1, kStart + i * 1000 + 100, kStart + i * 1000 + 100 + durations[i],
                                 kStreamLegacy, GpuActivityKind::kKernel));
  }
  trace.event(1, 100, launch(p, 9, kStart + 9000, kStart + 9050, 0xB, kStreamLegacy, /*device=*/1));
  trace.event(1, 100, activity(9, kStart + 9100, kStart + 9150, kStreamLegacy, GpuActivityKind::kKernel, 1));
  return write_trace(trace, "shapes.trace");
}

TEST(StatsGpuKernels, LaunchShapeBlocksPerSmAndTensorCores) {
  const CommandOutput result = stats(kernel_shape_trace(), "gpu-kernels");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const CsvTable table = csv_table(result.out, "GPU kernels");
  ASSERT_EQ(table.rows.size(), 2u) << result.out;
  const int gemm = table.find("gemm(float*, int)");
  ASSERT_EQ(gemm, 0) << result.out;
  EXPECT_EQ(table.cell(gemm, "Instances"), "3");
  EXPECT_EQ(table.cell(gemm, "Total Time (ns)"), "500");
  EXPECT_EQ(table.cell(gemm, "Avg (ns)"), "166");
  EXPECT_EQ(table.cell(gemm, "Min (ns)"), "100");
  EXPECT_EQ(table.cell(gemm, "Max (ns)"), "300");
  EXPECT_EQ(table.cell(gemm, "Time (%)"), "90.9");  // 500 of 550 ns
  EXPECT_EQ(table.cell(gemm, "Grid"), "64x2x1") << "the shape with the most GPU time (400 of 500 ns)";
  EXPECT_EQ(table.cell(gemm, "Block"), "256x1x1");
  EXPECT_EQ(table.cell(gemm, "Dyn Shared (B)"), "1024");
  EXPECT_EQ(table.cell(gemm, "Shapes"), "2");
  // (1.28 x 400 ns + 2.0 x 100 ns) / 500 ns
  EXPECT_EQ(table.cell(gemm, "Blocks/SM"), "1.42");
  EXPECT_EQ(table.cell(gemm, "Tensor Core"), "no");

  const int cutlass = table.find("cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4");
  ASSERT_EQ(cutlass, 1) << result.out;
  EXPECT_EQ(table.cell(cutlass, "Tensor Core"), "yes");
  EXPECT_EQ(table.cell(cutlass, "Time (%)"), "9.1");
  EXPECT_EQ(table.cell(cutlass, "Blocks/SM"), "-") << "device 1 has no DeviceInfo: no SM count";

  const CommandOutput text = stats(kernel_shape_trace(), "gpu-kernels", false);
  EXPECT_NE(text.out.find("no SM count"), std::string::npos) << text.out;
}

// Occupancy inputs recorded: an H100-like device and a kernel of 64
// registers per thread, no static shared memory, 256-thread blocks with
// 1 KiB dynamic shared memory (the launch helper's). Registers allow 4
// blocks per SM (65536 / (64 x 32) = 32 warps of 64): 50 %. Launch 1:
// 1320 blocks on 132 SMs, 300 ns, 50 %. Launch 2: 66 blocks, half a block
// per SM, 100 ns: 0.5 x 8 / 64 = 6.25 %. Weighted by GPU time:
// (50 x 300 + 6.25 x 100) / 400 = 39.0625 %. A second kernel whose
// FunctionDef has no resources (an older trace, a failed query) shows '-'.
std::string occupancy_trace() {
  TraceBuilder trace;
  TracedProcess p = add_process(trace, 1, 100, kStart);
  DeviceSpec device;
  device.multiprocessor_count = 132;
  device.max_threads_per_multiprocessor = 2048;
  device.max_blocks_per_multiprocessor = 32;
  device.registers_per_multiprocessor = 65536;
  device.registers_per_block = 65536;
  device.shared_bytes_per_multiprocessor = 228 * 1024;
  device.shared_bytes_per_block = 48 * 1024;
  device.shared_bytes_per_block_optin = 227 * 1024;
  device.reserved_shared_bytes_per_block = 1024;
  device.warp_size = 32;
  device.compute_capability_major = 9;
  trace.device(1, device);
  trace.function(1, 0xA, "_Z4gemmPfi", kStart,
                 FunctionResources{.registers_per_thread = 64, .static_shared_bytes = 0, .max_threads_per_block = 1024,
                                   .known = kFunctionRegisters | kFunctionStaticShared | kFunctionMaxThreadsPerBlock});
  trace.function(1, 0xB, "_Z4axpyPf", kStart);
  const uint64_t durations[] = {300, 100};
  const Dim3 grids[] = {{1320, 1, 1}, {66, 1, 1}};
  for (uint64_t i = 0; i < 2; ++i) {
    KernelLaunchRecord record = launch(p, i + 1, kStart + i * 1000, kStart + i * 1000 + 50, 0xA, kStreamLegacy);
    record.grid = grids[i];
    trace.event(1, 100, record);
    trace.event(1, 100, activity(i + 1, kStart + i * 1000 + 100, kStart + i * 1000 + 100 + durations[i],
                                 kStreamLegacy, GpuActivityKind::kKernel));
  }
  trace.event(1, 100, launch(p, 9, kStart + 9000, kStart + 9050, 0xB, kStreamLegacy));
  trace.event(1, 100, activity(9, kStart + 9100, kStart + 9150, kStreamLegacy, GpuActivityKind::kKernel));
  return write_trace(trace, "occupancy.trace");
}

TEST(StatsGpuKernels, RegistersSharedMemoryAndEstimatedOccupancy) {
  const CommandOutput result = stats(occupancy_trace(), "gpu-kernels");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const CsvTable table = csv_table(result.out, "GPU kernels");
  const int gemm = table.find("gemm(float*, int)");
  ASSERT_GE(gemm, 0) << result.out;
  EXPECT_EQ(table.cell(gemm, "Regs"), "64");
  EXPECT_EQ(table.cell(gemm, "Static Shared (B)"), "0");
  EXPECT_EQ(table.cell(gemm, "Est. Occupancy (%)"), "39.06");
  const int axpy = table.find("axpy(float*)");
  ASSERT_GE(axpy, 0) << result.out;
  EXPECT_EQ(table.cell(axpy, "Regs"), "-");
  EXPECT_EQ(table.cell(axpy, "Static Shared (B)"), "-");
  EXPECT_EQ(table.cell(axpy, "Est. Occupancy (%)"), "-");
  const CommandOutput text = stats(occupancy_trace(), "gpu-kernels", false);
  EXPECT_NE(text.out.find("Est. Occupancy is '-'"), std::string::npos) << text.out;
}

TEST(StatsGpuKernels, OccupancyIsUnknownOnDevicesOfAnOlderTrace) {
  // kernel_shape_trace's device has only an SM count (a first-version DeviceInfo).
  const CommandOutput result = stats(kernel_shape_trace(), "gpu-kernels");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const CsvTable table = csv_table(result.out, "GPU kernels");
  const int gemm = table.find("gemm(float*, int)");
  ASSERT_GE(gemm, 0) << result.out;
  EXPECT_EQ(table.cell(gemm, "Est. Occupancy (%)"), "-");
  EXPECT_EQ(table.cell(gemm, "Regs"), "-");
}

TEST(StatsGpuKernels, TensorCoreNameRule) {
  for (const char* name : {"volta_h884gemm_64x64_ldg8_nn", "turing_h1688gemm_128x128_ldg8_tn",
                           "ampere_s16816gemm_fp16_128x128_ldg8_f2f_nn", "ampere_i16832gemm_int8_256x128",
                           "sm90_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x64",
                           "cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4",
                           "void wmma_example<half>(half*, half*, float*)", "sm80_HMMA_kernel",
                           "cutlass3x_sm90_tensorop_gemm_f16_f16_f32", "i8816cudnn_kernel"})
    EXPECT_TRUE(tools::stats::is_tensor_core_kernel(name)) << name;
  for (const char* name : {"ampere_sgemm_128x64_nn", "splitKreduce_kernel", "relu_kernel",
                           "void at::native::elementwise_kernel<128, 4>(int)", "kernel_18840",
                           "maxwell_sgemm_1688x", "triton_poi_fused_add_mul_0", ""})
    EXPECT_FALSE(tools::stats::is_tensor_core_kernel(name)) << name;
}

TEST(StatsJson, EveryTableIsOneDocumentWithNumbersAsNumbers) {
  tools::StatsCommand command;
  command.inputs = {memory_trace()};
  command.json = true;
  command.sections = {"mem-ops", "api"};
  const CommandOutput result = run_stats_on(command);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::string error;
  const std::optional<JsonValue> document = parse_json(result.out, &error);
  ASSERT_TRUE(document.has_value()) << error << "\n" << result.out;
  const auto& tables = (*document)["tables"].items;
  ASSERT_EQ(tables.size(), 2u) << result.out;
  const JsonValue& memory = tables[0];
  EXPECT_EQ(memory["section"].str(), "mem-ops");
  ASSERT_EQ(memory["columns"].items.back().str(), "Operation");
  const auto& rows = memory["rows"].items;
  ASSERT_EQ(rows.size(), 4u) << result.out;
  // Rows are objects keyed by column name.
  EXPECT_EQ(rows[0]["Operation"].str(), "Memcpy HtoD pinned -> device");
  EXPECT_EQ(rows[0]["Total Time (ns)"].type, JsonValue::Type::kNumber);
  EXPECT_EQ(rows[0]["Total Time (ns)"].as_uint(), 1500u);
  EXPECT_DOUBLE_EQ(rows[0]["Bandwidth (GB/s)"].as_double(), 2000.0);
  EXPECT_EQ(rows[3]["Total Time (ns)"].type, JsonValue::Type::kNull) << "the memset's '-' time";
  EXPECT_EQ(rows[3]["Operation"].str(), "Memset device");
  EXPECT_EQ(memory["notes"].items.size(), 2u) << result.out;
  EXPECT_EQ(tables[1]["section"].str(), "api");
}

}  // namespace
}  // namespace proflaunch::testing
