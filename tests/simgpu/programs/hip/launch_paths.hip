// Every way a HIP program launches a kernel, each on an idle stream (the
// stream is synchronized after every launch), for the profiler's kernel
// timing tests. Built by Debian's hipcc for gfx90a.
//
//   launch_paths MODULE [--rounds N] [--first PATH]
//
// Each round launches, in this order: `chevron` (<<<>>>), `launch`
// (hipLaunchKernel), `spt` (hipLaunchKernel_spt on the null stream),
// `ext` (hipExtLaunchKernel without events), `ext_events`
// (hipExtLaunchKernel with the program's own start and stop events, whose
// elapsed time it checks is positive), `cooperative`
// (hipLaunchCooperativeKernel), `module` (hipModuleLaunchKernel of MODULE's
// `scale`) and `ext_module` (hipExtModuleLaunchKernel of it). --first moves
// one registered path to the front, so that its launch is the program's
// first (the one that loads the code object). Then launches the runtime
// rejects: a block of 2048 threads through hipLaunchKernel and
// hipModuleLaunchKernel, and an address that is no kernel; each error and
// the thread's last error after it are printed. Kernel names are
// k_<path>; their costs come from SIMGPU_KERNEL_COSTS.
#include <hip/hip_ext.h>
#include <hip/hip_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                                 \
  do {                                                                                              \
    hipError_t error_ = (call);                                                                     \
    if (error_ != hipSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, hipGetErrorName(error_)); \
      std::exit(2);                                                                                 \
    }                                                                                               \
  } while (0)

extern "C" hipError_t hipLaunchKernel_spt(const void*, dim3, dim3, void**, size_t, hipStream_t);

__global__ void k_chevron(float* x) { x[threadIdx.x] += 1.0f; }
__global__ void k_launch(float* x) { x[threadIdx.x] += 1.0f; }
__global__ void k_spt(float* x) { x[threadIdx.x] += 1.0f; }
__global__ void k_ext(float* x) { x[threadIdx.x] += 1.0f; }
__global__ void k_ext_events(float* x) { x[threadIdx.x] += 1.0f; }
__global__ void k_cooperative(float* x) { x[threadIdx.x] += 1.0f; }

namespace {

constexpr int kThreads = 64;
float* g_data = nullptr;
hipStream_t g_stream = nullptr;
hipFunction_t g_scale = nullptr;
int g_elements = kThreads;

void launch_path(const std::string& path) {
  void* args[] = {&g_data};
  const dim3 grid(1), block(kThreads);
  hipStream_t sync_stream = g_stream;
  if (path == "chevron") {
    k_chevron<<<grid, block, 0, g_stream>>>(g_data);
    CHECK(hipGetLastError());
  } else if (path == "launch") {
    CHECK(hipLaunchKernel(reinterpret_cast<const void*>(&k_launch), grid, block, args, 0, g_stream));
  } else if (path == "spt") {
    CHECK(hipLaunchKernel_spt(reinterpret_cast<const void*>(&k_spt), grid, block, args, 0, nullptr));
    sync_stream = hipStreamPerThread;
  } else if (path == "ext") {
    CHECK(hipExtLaunchKernel(reinterpret_cast<const void*>(&k_ext), grid, block, args, 0, g_stream, nullptr, nullptr,
                             0));
  } else if (path == "ext_events") {
    hipEvent_t start, stop;
    CHECK(hipEventCreate(&start));
    CHECK(hipEventCreate(&stop));
    CHECK(hipExtLaunchKernel(reinterpret_cast<const void*>(&k_ext_events), grid, block, args, 0, g_stream, start,
                             stop, 0));
    CHECK(hipEventSynchronize(stop));
    float ms = 0;
    CHECK(hipEventElapsedTime(&ms, start, stop));
    if (!(ms > 0)) {
      std::fprintf(stderr, "launch_paths: the program's own events measured %f ms\n", ms);
      std::exit(3);
    }
    CHECK(hipEventDestroy(start));
    CHECK(hipEventDestroy(stop));
  } else if (path == "cooperative") {
    CHECK(hipLaunchCooperativeKernel(reinterpret_cast<const void*>(&k_cooperative), grid, block, args, 0, g_stream));
  } else if (path == "module") {
    int n = g_elements;
    void* module_args[] = {&g_data, &n};
    CHECK(hipModuleLaunchKernel(g_scale, 1, 1, 1, kThreads, 1, 1, 0, g_stream, module_args, nullptr));
  } else if (path == "ext_module") {
    int n = g_elements;
    void* module_args[] = {&g_data, &n};
    CHECK(hipExtModuleLaunchKernel(g_scale, kThreads, 1, 1, kThreads, 1, 1, 0, g_stream, module_args, nullptr));
  } else {
    std::fprintf(stderr, "launch_paths: unknown path %s\n", path.c_str());
    std::exit(1);
  }
  CHECK(hipStreamSynchronize(sync_stream));
}

void print_rejected(const char* what, hipError_t error) {
  const hipError_t last = hipGetLastError();
  std::printf("launch_paths: %s -> %s, last error %s\n", what, hipGetErrorName(error), hipGetErrorName(last));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: launch_paths MODULE [--rounds N] [--first PATH]\n");
    return 1;
  }
  const char* module_path = argv[1];
  int rounds = 2;
  std::string first;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--first") == 0) first = argv[i + 1];
  }
  std::vector<std::string> paths = {"chevron", "launch", "spt", "ext", "ext_events", "cooperative", "module",
                                    "ext_module"};
  if (!first.empty()) {
    paths.erase(std::remove(paths.begin(), paths.end(), first), paths.end());
    paths.insert(paths.begin(), first);
  }

  CHECK(hipStreamCreateWithFlags(&g_stream, hipStreamNonBlocking));
  CHECK(hipMalloc(&g_data, kThreads * sizeof(float)));
  hipModule_t module;
  CHECK(hipModuleLoad(&module, module_path));
  CHECK(hipModuleGetFunction(&g_scale, module, "scale"));

  for (int round = 0; round < rounds; ++round)
    for (const std::string& path : paths) launch_path(path);

  void* args[] = {&g_data};
  print_rejected("hipLaunchKernel with 2048 threads per block",
                 hipLaunchKernel(reinterpret_cast<const void*>(&k_launch), dim3(1), dim3(2048), args, 0, g_stream));
  int n = g_elements;
  void* module_args[] = {&g_data, &n};
  print_rejected("hipModuleLaunchKernel with 2048 threads per block",
                 hipModuleLaunchKernel(g_scale, 1, 1, 1, 2048, 1, 1, 0, g_stream, module_args, nullptr));
  print_rejected("hipLaunchKernel of an address that is no kernel",
                 hipLaunchKernel(reinterpret_cast<const void*>(&print_rejected), dim3(1), dim3(kThreads), args, 0,
                                 g_stream));
  CHECK(hipStreamSynchronize(g_stream));

  CHECK(hipModuleUnload(module));
  CHECK(hipFree(g_data));
  CHECK(hipStreamDestroy(g_stream));
  std::printf("launch_paths: rounds=%d paths=%zu ok\n", rounds, paths.size());
  return 0;
}
