// Issue 16: the kernel view's occupancy inputs arrive in the trace of a real
// nvcc-built program on the simulated stack, and `stats` estimates occupancy
// from them. The function's resources must equal what the program itself
// sees through cudaFuncGetAttributes (the simulator reads them from the
// cubin nvcc wrote), the device's limits what cudaGetDeviceProperties says;
// the Est. Occupancy cell must equal the value computed here, independently,
// from the recorded fields and GPU times. The program also checks that the
// runtime's last error stays cudaSuccess and that a capture during which
// the shim first sees a kernel (and asks the driver about it) still succeeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

struct Printed {
  int regs = -1, max_threads = -1;
  unsigned long static_shared = 0, local = 0;
};

Printed parse_function(const std::string& out, const std::string& name) {
  Printed p;
  const size_t at = out.find(name + " regs=");
  if (at == std::string::npos) return p;
  std::sscanf(out.c_str() + at + name.size(), " regs=%d static_shared=%lu max_threads=%d local=%lu", &p.regs,
              &p.static_shared, &p.max_threads, &p.local);
  return p;
}

const format::FunctionDefRecord* function_named(const ProcessImage& image, const std::string& fragment) {
  for (const auto& [handle, versions] : image.functions)
    for (const auto& def : versions)
      if (image.string(def.name_string).find(fragment) != std::string::npos) return &def;
  return nullptr;
}

// The estimate as tools/README.md writes it, for compute capability >= 8.0.
double estimated_occupancy(const format::KernelLaunchRecord& l, const format::FunctionDefRecord& f,
                           const format::DeviceInfoRecord& d) {
  const double warp = d.warp_size;
  const long threads = long(l.block.x) * l.block.y * l.block.z;
  const long warps_per_block = long(std::ceil(threads / warp));
  const long max_warps = long(d.max_threads_per_multiprocessor / warp);
  long blocks = std::min<long>(max_warps / warps_per_block, d.max_blocks_per_multiprocessor);
  if (f.registers_per_thread > 0) {
    const long per_warp = long(std::ceil(f.registers_per_thread * warp / 256.0) * 256);
    blocks = std::min<long>(blocks, (d.registers_per_multiprocessor / per_warp) / 4 * 4 / warps_per_block);
  }
  const long shared = long(std::ceil((f.static_shared_bytes + l.dynamic_shared_bytes +
                                      d.reserved_shared_bytes_per_block) / 128.0) * 128);
  blocks = std::min<long>(blocks, d.shared_bytes_per_multiprocessor / shared);
  const double grid_per_sm = double(l.grid.x) * l.grid.y * l.grid.z / d.multiprocessor_count;
  return std::min<double>(blocks, grid_per_sm) * warps_per_block / max_warps;
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) cells.emplace_back();
    else cells.back() += c;
  }
  return cells;
}

TEST(Occupancy, ResourcesArriveAndTheEstimateFollowsFromThem) {
  TempDir dir;
  const ProcessResult run = testing::run_process(traced(dir / "x.trace", {build_path("OCCUPANCY")}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  ASSERT_EQ(trace.images.size(), 1u) << describe(trace);
  const ProcessImage& image = trace.images.front();

  // The functions: what the program sees through the runtime.
  for (const char* name : {"tiled_scale", "captured_add"}) {
    SCOPED_TRACE(name);
    const Printed seen = parse_function(run.out, name);
    ASSERT_GT(seen.regs, 0) << run.out;
    const format::FunctionDefRecord* def = function_named(image, name);
    ASSERT_NE(def, nullptr) << describe(trace);
    EXPECT_EQ(def->header.bytes, sizeof(format::FunctionDefRecord));
    EXPECT_EQ(def->attributes_known, 15u) << "all four queries answered";
    EXPECT_EQ(def->registers_per_thread, uint32_t(seen.regs));
    EXPECT_EQ(def->static_shared_bytes, seen.static_shared);
    EXPECT_EQ(def->max_threads_per_block, uint32_t(seen.max_threads));
    EXPECT_EQ(def->local_bytes_per_thread, seen.local);
  }
  EXPECT_GE(function_named(image, "tiled_scale")->static_shared_bytes, 4096u) << "__shared__ float[1024]";

  // The device.
  ASSERT_EQ(image.devices.count(0), 1u);
  const format::DeviceInfoRecord& d = image.devices.at(0);
  char expected[512];
  std::snprintf(expected, sizeof expected,
                "device sms=%u threads_per_sm=%u blocks_per_sm=%u regs_per_sm=%u regs_per_block=%u "
                "shared_per_sm=%u shared_per_block=%u optin=%u reserved=%u warp=%u cc=%u.%u",
                d.multiprocessor_count, d.max_threads_per_multiprocessor, d.max_blocks_per_multiprocessor,
                d.registers_per_multiprocessor, d.registers_per_block, d.shared_bytes_per_multiprocessor,
                d.shared_bytes_per_block, d.shared_bytes_per_block_optin, d.reserved_shared_bytes_per_block,
                d.warp_size, unsigned(d.compute_capability_major), unsigned(d.compute_capability_minor));
  EXPECT_NE(run.out.find(expected), std::string::npos) << "recorded: " << expected << "\nprogram: " << run.out;
  EXPECT_GT(d.max_threads_per_multiprocessor, 0u);
  EXPECT_GE(d.compute_capability_major, 8u) << "the formula below assumes 128-byte shared allocation";

  // The estimate, from the recorded fields, weighted by GPU time.
  const format::FunctionDefRecord& tiled = *function_named(image, "tiled_scale");
  double occupancy_ns = 0, weight_ns = 0;
  int launches = 0;
  double largest = 0;
  for (const Operation* op : image.launches()) {
    if (op->kernel.find("tiled_scale") == std::string::npos) continue;
    ASSERT_EQ(op->gpu.size(), 1u) << "timed launch";
    const double ns = double(op->gpu[0].end_ns - op->gpu[0].start_ns);
    const double occupancy = estimated_occupancy(op->launch, tiled, d);
    largest = std::max(largest, occupancy);
    occupancy_ns += occupancy * ns;
    weight_ns += ns;
    ++launches;
  }
  ASSERT_EQ(launches, 2);
  ASSERT_GT(weight_ns, 0);
  const double expected_percent = 100.0 * occupancy_ns / weight_ns;

  const ProcessResult stats =
      run_proftrace({"stats", "--section", "gpu-kernels", "--csv", dir / "x.trace"});
  ASSERT_TRUE(stats.exited_with(0)) << stats.describe();
  std::istringstream lines(stats.out);
  std::string line;
  std::vector<std::string> columns;
  std::vector<std::string> row;
  while (std::getline(lines, line)) {
    std::vector<std::string> cells = split_csv_line(line);
    if (std::find(cells.begin(), cells.end(), "Est. Occupancy (%)") != cells.end()) columns = cells;
    else if (!columns.empty() && cells.size() == columns.size() && cells.back().find("tiled_scale") != std::string::npos)
      row = cells;
  }
  ASSERT_FALSE(row.empty()) << stats.out;
  auto cell = [&](const std::string& column) {
    return row[std::find(columns.begin(), columns.end(), column) - columns.begin()];
  };
  EXPECT_EQ(cell("Regs"), std::to_string(tiled.registers_per_thread));
  EXPECT_EQ(cell("Static Shared (B)"), std::to_string(tiled.static_shared_bytes));
  ASSERT_NE(cell("Est. Occupancy (%)"), "-") << stats.out;
  EXPECT_NEAR(std::stod(cell("Est. Occupancy (%)")), expected_percent, 0.006) << stats.out;
  // The small launch (8 blocks on many SMs) pulls the mean below the large one's.
  EXPECT_LT(expected_percent, 100.0 * largest);
}

}  // namespace
}  // namespace proflaunch::e2e
