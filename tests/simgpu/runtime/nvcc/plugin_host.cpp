// Loads plugin_kernels (argv[1]) with dlopen, launches its kernel, unloads
// it, and does that twice: registration from a dlopen'ed library, the lazy
// load of its fatbin, and its unload at dlclose must all work, and a second
// load must not reuse anything stale from the first. The test gives
// plugin_kernel a 3 ms modelled cost, so the event pair shows it really ran.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>

using PluginLaunch = int (*)(float*, int, cudaStream_t);

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: plugin_host PLUGIN.so\n");
    return 2;
  }
  const int n = 1024;
  float* data = nullptr;
  if (cudaMalloc(reinterpret_cast<void**>(&data), n * sizeof(float)) != cudaSuccess) return 1;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int cycle = 1; cycle <= 2; ++cycle) {
    void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (plugin == nullptr) {
      std::fprintf(stderr, "dlopen: %s\n", dlerror());
      return 1;
    }
    auto launch = reinterpret_cast<PluginLaunch>(dlsym(plugin, "plugin_launch"));
    if (launch == nullptr) return 1;
    cudaEventRecord(start, nullptr);
    int status = launch(data, n, nullptr);
    cudaEventRecord(stop, nullptr);
    cudaEventSynchronize(stop);
    float elapsed_ms = 0;
    cudaEventElapsedTime(&elapsed_ms, start, stop);
    std::printf("cycle %d: launch %s, %s (%.3f ms)\n", cycle,
                cudaGetErrorName(static_cast<cudaError_t>(status)),
                elapsed_ms >= 2.7f ? "plugin_kernel ran" : "plugin_kernel did NOT run", elapsed_ms);
    dlclose(plugin);
  }
  cudaFree(data);
  return 0;
}
