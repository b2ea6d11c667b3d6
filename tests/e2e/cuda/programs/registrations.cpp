// Kernels registered by library constructors, and host functions the program
// queues on a stream.
//
// - libe2e_registering_library.so (linked): its kernels are registered by
//   nvcc's constructor before main, and before the preloaded shim's own
//   constructor (libraries are initialized before the objects that load
//   them, and a preloaded library depends on none of them).
// - argv[1] (dlopen'ed): a plugin whose kernel is registered inside dlopen.
// - host functions: cudaLaunchHostFunc and cudaStreamAddCallback with the
//   program's own (static, not exported) functions, which the runtime runs
//   through a function of its own.
//
// - --profiler-window: everything up to the plugin's dlopen happens before
//   a cudaProfilerStart/Stop window that holds the launches (run with
//   --capture-range=cudaProfilerApi: the registrations are made while
//   recording is paused); prints the CLOCK_MONOTONIC times around dlopen.
//
// Prints what ran, so that the test can tell a program that failed from a
// trace that missed something.
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>

extern "C" int library_launch(float* data, int n, cudaStream_t stream);

namespace {

std::atomic<int> g_steps_done{0};
std::atomic<int> g_callbacks_done{0};

void mark_step_done(void*) { g_steps_done.fetch_add(1); }

void CUDART_CB report_stream_done(cudaStream_t, cudaError_t status, void*) {
  if (status == cudaSuccess) g_callbacks_done.fetch_add(1);
}

uint64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return uint64_t(now.tv_sec) * 1'000'000'000u + uint64_t(now.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: registrations PLUGIN.so [--profiler-window]\n");
    return 2;
  }
  const bool profiler_window = argc > 2 && std::strcmp(argv[2], "--profiler-window") == 0;
  const int n = 4096;
  float* data = nullptr;
  if (cudaMalloc(reinterpret_cast<void**>(&data), n * sizeof(float)) != cudaSuccess) return 1;
  cudaStream_t stream = nullptr;
  if (cudaStreamCreate(&stream) != cudaSuccess) return 1;

  const uint64_t dlopen_began = monotonic_ns();
  void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  const uint64_t dlopen_ended = monotonic_ns();
  if (plugin == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  std::printf("dlopen from %llu to %llu\n", static_cast<unsigned long long>(dlopen_began),
              static_cast<unsigned long long>(dlopen_ended));
  if (profiler_window && cudaProfilerStart() != cudaSuccess) return 1;
  using PluginLaunch = int (*)(float*, int, cudaStream_t);
  auto plugin_launch = reinterpret_cast<PluginLaunch>(dlsym(plugin, "plugin_launch"));
  if (plugin_launch == nullptr) return 1;

  for (int step = 0; step < 3; ++step) {
    if (library_launch(data, n, stream) != 0) return 1;
    if (plugin_launch(data, n, stream) != 0) return 1;
    if (cudaLaunchHostFunc(stream, mark_step_done, nullptr) != cudaSuccess) return 1;
    if (cudaStreamAddCallback(stream, report_stream_done, nullptr, 0) != cudaSuccess) return 1;
  }
  if (cudaStreamSynchronize(stream) != cudaSuccess) return 1;
  if (profiler_window && cudaProfilerStop() != cudaSuccess) return 1;
  std::printf("host functions run: %d, callbacks run: %d\n", g_steps_done.load(), g_callbacks_done.load());
  std::printf("mark_step_done at %p\nreport_stream_done at %p\n", reinterpret_cast<void*>(&mark_step_done),
              reinterpret_cast<void*>(&report_stream_done));
  dlclose(plugin);
  cudaStreamDestroy(stream);
  cudaFree(data);
  return g_steps_done.load() == 3 && g_callbacks_done.load() == 3 ? 0 : 1;
}
