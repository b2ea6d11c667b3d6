// Coverage: every way a program reaches the GPU shows up in the trace, with
// the kernel names the program launched and exactly as many launches and
// copies as it made:
//  - nvcc <<<>>> launches through the runtime (__cudaLaunchKernel),
//  - the cuBLAS-like library that reaches the driver only through
//    cuGetProcAddress_v2,
//  - the Triton-like library that dlsyms cuLaunchKernel from libcuda.so.1.
#include <gtest/gtest.h>

#include <regex>

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
