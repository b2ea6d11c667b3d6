// Coverage: every way a program reaches the GPU shows up in the trace, with
// the kernel names the program launched and exactly as many launches and
// copies as it made:
//  - nvcc <<<>>> launches through the runtime (__cudaLaunchKernel),
//  - the cuBLAS-like library that reaches the driver only through
//    cuGetProcAddress_v2,
//  - the Triton-like library that dlsyms cuLaunchKernel from libcuda.so.1.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <regex>
#include <sstream>

#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

long number_after(const std::string& text, const std::string& key) {
  std::smatch match;
  if (!std::regex_search(text, match, std::regex(key + "=([0-9]+)"))) return -1;
  return std::stol(match[1]);
}

// The one image of a single-process run, with the run's output checked.
const ProcessImage& only_image(const CudaTrace& trace) {
  static const ProcessImage empty;
  EXPECT_EQ(trace.images.size(), 1u) << describe(trace);
  EXPECT_TRUE(trace.report.clean()) << format::summarize(trace.report);
  return trace.images.empty() ? empty : trace.images.front();
}

// Kernels of training_loop per step (tests/simgpu/README.md: the program's
// step and simblasSgemm's kernel choice per shape). Fragments of the
// mangled names.
struct ExpectedKernel {
  const char* fragment;
  bool via_runtime;
};
const ExpectedKernel kTrainingStepKernels[] = {
    {"ampere_sgemm_128x64_nn", false},                              // forward 1: 2048x256x512
    {"cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4", false},  // forward 2: split-K
    {"splitKreduce_kernel", false},                                 //   and its reduction
    {"cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4", false},  // dW2: m=100
    {"ampere_sgemm_128x64_tn", false},                              // dh
    {"ampere_sgemm_128x64_nt", false},                              // dW1
    {"ReluFunctor", true},
    {"FillFunctor", true},
    {"cross_entropy_loss_forward_backward_kernel", true},
    {"ThresholdBackwardFunctor", true},
    {"AdamFunctor", true},
};

TEST(Coverage, TrainingLoopRuntimeAndBlasLaunchesAreAllThereWithTheirNames) {
  TempDir dir;
  const int steps = 4;
  const ProcessResult run = testing::run_process(
      traced(dir / "x.trace", {build_path("TRAINING_LOOP"), "--steps", std::to_string(steps)}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const long runtime_kernels = number_after(run.out, "runtime_kernels");
  const long gemms = number_after(run.out, "gemms");
  const long h2d_bytes = number_after(run.out, "h2d_bytes");
  const long loss_reads = number_after(run.out, "loss_reads");
  ASSERT_EQ(runtime_kernels, 5 * steps) << run.out;
  ASSERT_EQ(gemms, 5 * steps) << run.out;

  const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  const ProcessImage& image = only_image(trace);
  int runtime_launches = 0, driver_launches = 0;
  for (const ExpectedKernel& kernel : kTrainingStepKernels) {
    EXPECT_EQ(image.launch_count(kernel.fragment), steps) << kernel.fragment << "\n" << describe(trace);
  }
  for (const Operation* launch : image.launches()) {
    ASSERT_FALSE(launch->kernel.empty()) << "a launch without a kernel name";
    bool known = false;
    for (const ExpectedKernel& kernel : kTrainingStepKernels) {
      if (launch->kernel.find(kernel.fragment) == std::string::npos) continue;
      known = true;
      EXPECT_EQ(launch->via_runtime(), kernel.via_runtime) << launch->kernel;
    }
    EXPECT_TRUE(known) << "unexpected kernel " << launch->kernel;
    (launch->via_runtime() ? runtime_launches : driver_launches)++;
  }
  EXPECT_EQ(runtime_launches, runtime_kernels);
  // Five GEMMs a step, one of them split-K (two kernels).
  EXPECT_EQ(driver_launches, gemms + steps);

  // Copies: two weight uploads, two batch uploads a step, the loss reads.
  EXPECT_EQ(static_cast<long>(image.copies().size()), 2 + 2 * steps + loss_reads);
  long uploaded = 0;
  for (const Operation* copy : image.copies())
    if (copy->copy.direction == static_cast<uint8_t>(format::CopyDirection::kHostToDevice))
      uploaded += static_cast<long>(copy->bytes);
  EXPECT_EQ(uploaded, h2d_bytes);
  EXPECT_EQ(image.sets().size(), 4u);  // the Adam moments, zeroed once
}

// `proftrace stats --csv`: the rows of the table whose title contains
// `title`, as column name -> cell.
std::vector<std::map<std::string, std::string>> stats_rows(const std::string& out, const std::string& title) {
  auto split = [](const std::string& line) {
    std::vector<std::string> cells(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      if (quoted && line[i] == '"' && i + 1 < line.size() && line[i + 1] == '"') cells.back() += line[++i];
      else if (line[i] == '"') quoted = !quoted;
      else if (!quoted && line[i] == ',') cells.emplace_back();
      else cells.back() += line[i];
    }
    return cells;
  };
  std::vector<std::map<std::string, std::string>> rows;
  std::vector<std::string> columns;
  std::istringstream lines(out);
  bool inside = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# ", 0) == 0) {
      inside = line.find(title) != std::string::npos;
      std::getline(lines, line);
      columns = split(line);
      continue;
    }
    if (!inside || line.empty()) continue;
    const auto cells = split(line);
    std::map<std::string, std::string> row;
    for (size_t c = 0; c < cells.size() && c < columns.size(); ++c) row[columns[c]] = cells[c];
    rows.push_back(row);
  }
  return rows;
}

// stats on a training_loop run: mem-ops sums exactly the copies the program
// says it made and the memsets the trace holds, all with GPU time; the
// kernel table's launch shape, blocks per SM and tensor-core flag agree with
// the launch records, their GPU time and the device's SM count.
TEST(Coverage, TrainingLoopStatsSumItsCopiesAndDescribeItsLaunches) {
  TempDir dir;
  const int steps = 4;
  const ProcessResult run = testing::run_process(
      traced(dir / "x.trace", {build_path("TRAINING_LOOP"), "--steps", std::to_string(steps)}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const long h2d_bytes = number_after(run.out, "h2d_bytes");
  const long loss_reads = number_after(run.out, "loss_reads");
  ASSERT_GT(h2d_bytes, 0) << run.out;
  ASSERT_GT(loss_reads, 0) << run.out;
  const ProcessResult stats = run_proftrace(
      {"stats", "--csv", "--section", "mem-ops", "--section", "gpu-kernels", dir / "x.trace"});
  ASSERT_TRUE(stats.exited_with(0)) << stats.describe();
  const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  const ProcessImage& image = only_image(trace);

  const auto memory = stats_rows(stats.out, "Memory operations");
  ASSERT_FALSE(memory.empty()) << stats.out;
  long h2d_sum = 0, h2d_count = 0, d2h_sum = 0, d2h_count = 0, set_sum = 0, set_count = 0;
  double shares = 0;
  for (const auto& row : memory) {
    const std::string& operation = row.at("Operation");
    const long bytes = std::stol(row.at("Total Bytes")), count = std::stol(row.at("Count"));
    if (operation.rfind("Memcpy HtoD ", 0) == 0) h2d_sum += bytes, h2d_count += count;
    if (operation.rfind("Memcpy DtoH ", 0) == 0) d2h_sum += bytes, d2h_count += count;
    if (operation.rfind("Memset ", 0) == 0) set_sum += bytes, set_count += count;
    EXPECT_EQ(row.at("No GPU Time"), "0") << operation;
    ASSERT_NE(row.at("Total Time (ns)"), "-") << operation;
    const double ns = std::stod(row.at("Total Time (ns)"));
    if (ns > 0) EXPECT_NEAR(std::stod(row.at("Bandwidth (GB/s)")), double(bytes) / ns, 0.006) << operation;
    shares += std::stod(row.at("Time (%)"));
  }
  EXPECT_EQ(h2d_sum, h2d_bytes) << stats.out;
  EXPECT_EQ(h2d_count, 2 + 2 * steps) << stats.out;
  EXPECT_EQ(d2h_count, loss_reads) << stats.out;
  EXPECT_EQ(d2h_sum, loss_reads * long(sizeof(float))) << stats.out;
  long trace_set_bytes = 0;
  for (const Operation* set : image.sets()) trace_set_bytes += static_cast<long>(set->bytes);
  EXPECT_EQ(set_count, static_cast<long>(image.sets().size())) << stats.out;
  EXPECT_EQ(set_sum, trace_set_bytes) << stats.out;
  EXPECT_NEAR(shares, 100.0, 0.1 * double(memory.size())) << stats.out;
  // The weights come from std::vectors, the batches from pinned staging buffers.
  bool pageable = false, pinned = false;
  for (const auto& row : memory) {
    if (row.at("Operation") == "Memcpy HtoD pageable -> device") pageable = row.at("Count") == "2";
    if (row.at("Operation") == "Memcpy HtoD pinned -> device") pinned = row.at("Count") == std::to_string(2 * steps);
  }
  EXPECT_TRUE(pageable && pinned) << stats.out;

  const auto kernels = stats_rows(stats.out, "GPU kernels");
  ASSERT_EQ(image.devices.count(0), 1u);
  const double sms = image.devices.at(0).multiprocessor_count;
  ASSERT_GT(sms, 0);
  for (const ExpectedKernel& expected : kTrainingStepKernels) {
    const std::map<std::string, std::string>* row = nullptr;
    for (const auto& candidate : kernels)
      if (candidate.at("Name").find(expected.fragment) != std::string::npos) row = &candidate;
    ASSERT_NE(row, nullptr) << expected.fragment << "\n" << stats.out;
    // From the launch records: blocks per SM weighted by GPU time, the shape with the most GPU time.
    double weighted = 0, weight = 0;
    std::map<std::string, double> ns_by_shape;
    for (const Operation* launch : image.launches()) {
      if (launch->kernel.find(expected.fragment) == std::string::npos || launch->gpu.empty()) continue;
      const auto& g = launch->launch.grid;
      const auto& b = launch->launch.block;
      const double ns = double(launch->gpu.front().end_ns - launch->gpu.front().start_ns);
      weighted += double(uint64_t{g.x} * g.y * g.z) / sms * ns;
      weight += ns;
      ns_by_shape[std::to_string(g.x) + "x" + std::to_string(g.y) + "x" + std::to_string(g.z) + " " +
                  std::to_string(b.x) + "x" + std::to_string(b.y) + "x" + std::to_string(b.z)] += ns;
    }
    ASSERT_GT(weight, 0) << expected.fragment;
    EXPECT_NEAR(std::stod(row->at("Blocks/SM")), weighted / weight, 0.006) << expected.fragment;
    EXPECT_EQ(row->at("Shapes"), std::to_string(ns_by_shape.size())) << expected.fragment;
    if (ns_by_shape.size() == 1)
      EXPECT_EQ(row->at("Grid") + " " + row->at("Block"), ns_by_shape.begin()->first) << expected.fragment;
    // CUTLASS's tensorop kernels run on tensor cores; SGEMM and the elementwise kernels do not.
    const bool tensor_cores = std::string(expected.fragment).find("tensorop") != std::string::npos;
    EXPECT_EQ(row->at("Tensor Core"), tensor_cores ? "yes" : "no") << expected.fragment;
  }
}

TEST(Coverage, EveryGemmFamilyOfTheBlasLibraryIsNamed) {
  TempDir dir;
  const ProcessResult run = testing::run_process(traced(dir / "x.trace", {build_path("GEMM_MIX")}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  const ProcessImage& image = only_image(trace);
  const std::map<std::string, int> expected = {
      {"ampere_sgemm_128x64_nn", 1},
      {"_ZN7cutlass7Kernel2I50cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4EEvNT_6ParamsE", 2},
      {"_Z19splitKreduce_kernelILi32ELi16EiffLb1ELb0EEv19simblasSplitKParamsIfEPKT2_PT3_", 1},
      {"sm90_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
       "segment_k_off_kernel__5x_cublas",
       1},
  };
  EXPECT_EQ(image.launches_by_kernel(), expected) << describe(trace);
  for (const Operation* launch : image.launches()) EXPECT_EQ(launch->api, "cuLaunchKernel");
}

TEST(Coverage, TritonLikeDlsymLaunchesAreNamedAndCounted) {
  TempDir dir;
  const int iterations = 5;
  const ProcessResult run = testing::run_process(traced(
      dir / "x.trace", {build_path("TRITON_LIKE"), "--iterations", std::to_string(iterations)}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  ASSERT_EQ(number_after(run.out, "triton_launches"), 2 * iterations) << run.out;
  const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  const ProcessImage& image = only_image(trace);
  const std::map<std::string, int> expected = {{"triton_poi_fused_add_mul_0", iterations},
                                               {"triton_red_fused__softmax_1", iterations}};
  EXPECT_EQ(image.launches_by_kernel(), expected) << describe(trace);
  // The tensors go through the runtime: two uploads and one download.
  ASSERT_EQ(image.copies().size(), 3u);
  for (const Operation* copy : image.copies()) EXPECT_EQ(copy->api, "cudaMemcpyAsync");
}

TEST(Coverage, NvccProgramOnTheDefaultStream) {
  TempDir dir;
  const ProcessResult run = testing::run_process(
      traced(dir / "x.trace", {build_path("STREAM_OPS"), "--launches", "7"}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  const ProcessImage& image = only_image(trace);
  EXPECT_EQ(image.launches_by_kernel(), (std::map<std::string, int>{{"_Z16e2e_timed_kernelPfi", 7}}))
      << describe(trace);
  EXPECT_EQ(image.copies().size(), 3u);
  EXPECT_EQ(image.sets().size(), 2u);
}

}  // namespace
}  // namespace proflaunch::e2e
