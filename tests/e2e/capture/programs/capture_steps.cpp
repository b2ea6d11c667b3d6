// A training-loop-shaped program for the capture-window tests: each step is
// an NVTX range "train_step" whose first GPU work is the loss kernel (a
// kernel:NAME step), then a temporary allocation, a host-to-device copy of
// 4096 * (step + 1) bytes (so a trace tells which steps it holds by the
// copies' sizes), a fill kernel and a free. Optional markers:
//
//   capture_steps [--steps N] [--profiler A-B[,C-D...]] [--region A-B]
//                 [--sleep-ms M] [--end crash|oom|sticky]
//
//   --profiler: cudaProfilerStart before step A, cudaProfilerStop after step B
//   --region:   an NVTX range "region" in domain "app" from step A to step B
//
//   --end (after the loop, for the flight recorder; a comma list run in
//               this order): oom: a cudaMalloc larger than the device, which
//               fails, then two more steps N and N+1 (allocation, copy, free); sticky:
//               the relu kernel, which faults when SIMGPU_FAULT_KERNELS names
//               it, then cudaDeviceSynchronize reports the sticky error, exit
//               1; crash: a write through a null pointer (SIGSEGV).
//
// A 3 MiB block allocated before the loop is freed in step 3; a 1 MiB block
// lives throughout. Real nvtx3 headers, kernels built by nvcc, the
// simulated runtime. stdout: one line a test compares with the untraced run.
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common/kernels.h"

#define CHECK(call)                                                                     \
  do {                                                                                  \
    cudaError_t e_ = (call);                                                            \
    if (e_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "capture_steps: %s: %s\n", #call, cudaGetErrorName(e_));      \
      std::exit(2);                                                                     \
    }                                                                                   \
  } while (0)

namespace {

std::vector<std::pair<int, int>> parse_ranges(const char* text) {
  std::vector<std::pair<int, int>> out;
  std::string s(text);
  size_t at = 0;
  while (at <= s.size()) {
    const size_t comma = s.find(',', at);
    const std::string item = s.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    int a = 0, b = 0;
    if (std::sscanf(item.c_str(), "%d-%d", &a, &b) != 2) {
      std::fprintf(stderr, "capture_steps: bad range '%s'\n", item.c_str());
      std::exit(64);
    }
    out.emplace_back(a, b);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

// A real fault (SIGSEGV with a fault's si_code), also in sanitizer builds.
// The pointer is read from a volatile, so the compiler cannot see it is null
// (a visible null store is undefined behaviour it may delete).
volatile int* volatile g_nowhere = nullptr;
__attribute__((noinline, no_sanitize("undefined"))) void write_through_null() { *g_nowhere = 1; }

}  // namespace

int main(int argc, char** argv) {
  int steps = 8;
  int sleep_ms = 0;
  std::vector<std::pair<int, int>> profiler, region;
  std::string end;
  // Created once the first step is done: a test that acts mid-run waits for
  // it instead of guessing how long starting takes.
  const char* started_file = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) steps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--profiler") && i + 1 < argc) profiler = parse_ranges(argv[++i]);
    else if (!std::strcmp(argv[i], "--region") && i + 1 < argc) region = parse_ranges(argv[++i]);
    else if (!std::strcmp(argv[i], "--sleep-ms") && i + 1 < argc) sleep_ms = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--end") && i + 1 < argc) end = argv[++i];
    else if (!std::strcmp(argv[i], "--started-file") && i + 1 < argc) started_file = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--steps N] [--profiler A-B,...] [--region A-B] [--sleep-ms M] [--end crash|oom|sticky] [--started-file PATH]\n", argv[0]);
      return 64;
    }
  }
  const nvtxDomainHandle_t app = nvtxDomainCreateA("app");
  nvtxEventAttributes_t region_attributes{};
  region_attributes.version = NVTX_VERSION;
  region_attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  region_attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  region_attributes.message.ascii = "region";

  constexpr int kClasses = 16, kBatch = 32;
  float *logits = nullptr, *loss = nullptr, *grad = nullptr, *persistent = nullptr, *early = nullptr;
  int* labels = nullptr;
  CHECK(cudaMalloc(reinterpret_cast<void**>(&persistent), 1 << 20));
  CHECK(cudaMalloc(reinterpret_cast<void**>(&early), 3 << 20));
  CHECK(cudaMalloc(reinterpret_cast<void**>(&logits), kClasses * kBatch * sizeof(float)));
  CHECK(cudaMalloc(reinterpret_cast<void**>(&grad), kClasses * kBatch * sizeof(float)));
  CHECK(cudaMalloc(reinterpret_cast<void**>(&loss), sizeof(float)));
  CHECK(cudaMalloc(reinterpret_cast<void**>(&labels), kBatch * sizeof(int)));
  CHECK(cudaMemset(labels, 0, kBatch * sizeof(int)));
  CHECK(cudaMemset(logits, 0, kClasses * kBatch * sizeof(float)));
  std::vector<char> host(4096 * (steps + 3), 1);

  double checksum = 0;
  for (int s = 0; s < steps; ++s) {
    for (const auto& r : profiler)
      if (r.first == s) CHECK(cudaProfilerStart());
    for (const auto& r : region)
      if (r.first == s) nvtxDomainRangePushEx(app, &region_attributes);
    nvtxRangePushA("train_step");
    CHECK(simtorch::cross_entropy(logits, labels, loss, grad, kClasses, kBatch, nullptr));
    float* temp = nullptr;
    const size_t temp_bytes = size_t(s + 1) * 64 * 1024;
    CHECK(cudaMalloc(reinterpret_cast<void**>(&temp), temp_bytes));
    CHECK(cudaMemcpy(temp, host.data(), 4096 * size_t(s + 1), cudaMemcpyHostToDevice));
    CHECK(simtorch::fill(temp, 1024, float(s), nullptr));
    float value = 0;
    CHECK(cudaMemcpy(&value, temp, sizeof value, cudaMemcpyDeviceToHost));
    checksum += value;
    CHECK(cudaFree(temp));
    if (s == 3) CHECK(cudaFree(early));
    nvtxRangePop();
    for (const auto& r : region)
      if (r.second == s) nvtxDomainRangePop(app);
    for (const auto& r : profiler)
      if (r.second == s) CHECK(cudaProfilerStop());
    if (s == 0 && started_file != nullptr)
      if (std::FILE* file = std::fopen(started_file, "w")) std::fclose(file);
    if (sleep_ms > 0) usleep(static_cast<useconds_t>(sleep_ms) * 1000);
  }
  CHECK(cudaDeviceSynchronize());
  if (steps <= 3) CHECK(cudaFree(early));
  std::printf("capture_steps: steps=%d checksum=%.1f\n", steps, checksum);
  // --end oom,crash: the failed allocation, then the crash.
  if (end.find("oom") != std::string::npos) {
    void* huge = nullptr;
    const cudaError_t e = cudaMalloc(&huge, size_t{1} << 50);
    std::printf("capture_steps: oom: %s\n", cudaGetErrorName(e));
    // A few more steps after it (a program that recovers, as PyTorch's
    // caching allocator does by freeing its cache and retrying). Each sleeps
    // first: a flight-recorder dump the failure set off is written by then,
    // so no call is still running when it is (one would span the windows).
    for (int s = steps; s < steps + 2; ++s) {
      if (sleep_ms > 0) usleep(static_cast<useconds_t>(sleep_ms) * 1000);
      float* temp = nullptr;
      CHECK(cudaMalloc(reinterpret_cast<void**>(&temp), size_t(s + 1) * 64 * 1024));
      CHECK(cudaMemcpy(temp, host.data(), 4096 * size_t(s + 1), cudaMemcpyHostToDevice));
      CHECK(cudaFree(temp));
    }
  }
  if (end.find("sticky") != std::string::npos) {
    CHECK(simtorch::relu(logits, logits, kClasses * kBatch, nullptr));
    const cudaError_t e = cudaDeviceSynchronize();
    std::printf("capture_steps: sticky: %s\n", cudaGetErrorName(e));
    if (e != cudaSuccess) return 1;
  }
  if (end.find("crash") != std::string::npos) {
    std::fflush(stdout);
    write_through_null();
  }
  return 0;
}
