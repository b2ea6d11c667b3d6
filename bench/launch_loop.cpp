// The launch loop the overhead benchmark times (figure a): cuLaunchKernel on one stream,
// through a driver reached the way Triton reaches it (dlopen + dlsym by name;
// under the shim, dlsym hands out the shim's wrappers). Which driver -
// simulated or null - is decided by LD_LIBRARY_PATH. A stream sync every
// 4096 launches keeps the simulated driver's queue short; it is part of
// both the traced and the untraced loop.
#include <benchmark/benchmark.h>
#include <cuda.h>
#include <dlfcn.h>

#include <time.h>

#include <cstdio>
#include <cstdlib>


// The cubin of bench_kernel.cu, embedded by the build (embed_binary.py).
extern "C" const unsigned char bench_kernel_image[];

namespace {

struct Driver {
  CUresult (*init)(unsigned int);
  CUresult (*device_get)(CUdevice*, int);
  CUresult (*primary_retain)(CUcontext*, CUdevice);
  CUresult (*set_current)(CUcontext);
  CUresult (*module_load)(CUmodule*, const void*);
  CUresult (*get_function)(CUfunction*, CUmodule, const char*);
  CUresult (*stream_create)(CUstream*, unsigned int);
  CUresult (*stream_synchronize)(CUstream);
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                     CUstream, void**, void**);
  CUresult (*get_current)(CUcontext*);
  CUresult (*graph_launch)(CUgraphExec, CUstream);
};

template <typename T>
void bind(void* library, const char* name, T& slot) {
  slot = reinterpret_cast<T>(dlsym(library, name));
  if (slot == nullptr) {
    std::fprintf(stderr, "launch_loop: the driver has no %s\n", name);
    std::exit(2);
  }
}

struct Setup {
  Driver driver{};
  CUfunction function = nullptr;
  CUstream stream = nullptr;

  Setup() {
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      std::fprintf(stderr, "launch_loop: %s\n", dlerror());
      std::exit(2);
    }
    bind(library, "cuInit", driver.init);
    bind(library, "cuDeviceGet", driver.device_get);
    bind(library, "cuDevicePrimaryCtxRetain", driver.primary_retain);
    bind(library, "cuCtxSetCurrent", driver.set_current);
    bind(library, "cuModuleLoadData", driver.module_load);
    bind(library, "cuModuleGetFunction", driver.get_function);
    bind(library, "cuStreamCreate", driver.stream_create);
    bind(library, "cuStreamSynchronize", driver.stream_synchronize);
    bind(library, "cuLaunchKernel", driver.launch);
    bind(library, "cuCtxGetCurrent", driver.get_current);
    bind(library, "cuGraphLaunch", driver.graph_launch);
    CUdevice device = 0;
    CUcontext context = nullptr;
    CUmodule module = nullptr;
    if (driver.init(0) != CUDA_SUCCESS || driver.device_get(&device, 0) != CUDA_SUCCESS ||
        driver.primary_retain(&context, device) != CUDA_SUCCESS ||
        driver.set_current(context) != CUDA_SUCCESS ||
        driver.module_load(&module, bench_kernel_image) != CUDA_SUCCESS ||
        driver.get_function(&function, module, "bench_empty_kernel") != CUDA_SUCCESS ||
        driver.stream_create(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
      std::fprintf(stderr, "launch_loop: driver setup failed\n");
      std::exit(2);
    }
  }
};

// Fixed iterations per repetition, and a pause before each: the shim's rings
// must not be full when the timed loop starts, or the figure would be that
// of the (cheaper) drop path.
void BM_LaunchKernel(benchmark::State& state) {
  static Setup setup;
  setup.driver.stream_synchronize(setup.stream);
  timespec pause{0, 100'000'000};
  nanosleep(&pause, nullptr);
  unsigned launches = 0;
  for (auto _ : state) {
    setup.driver.launch(setup.function, 1, 1, 1, 32, 1, 1, 0, setup.stream, nullptr, nullptr);
    if (++launches % 4096 == 0) setup.driver.stream_synchronize(setup.stream);
  }
  setup.driver.stream_synchronize(setup.stream);
}
BENCHMARK(BM_LaunchKernel)->Iterations(40000);

// A call the shim counts rather than records (cuCtxGetCurrent, a trivial
// getter frameworks call constantly): what such a wrapper adds.
void BM_CountedCall(benchmark::State& state) {
  static Setup setup;
  CUcontext context = nullptr;
  for (auto _ : state) {
    setup.driver.get_current(&context);
    benchmark::DoNotOptimize(context);
  }
}
BENCHMARK(BM_CountedCall)->Iterations(2'000'000);

// cuGraphLaunch of an executable graph (the null driver takes any handle):
// what the shim adds to a graph launch, as for a kernel launch.
void BM_GraphLaunch(benchmark::State& state) {
  static Setup setup;
  static int graph_storage;
  const auto exec = reinterpret_cast<CUgraphExec>(&graph_storage);
  setup.driver.stream_synchronize(setup.stream);
  timespec pause{0, 100'000'000};
  nanosleep(&pause, nullptr);
  unsigned launches = 0;
  for (auto _ : state) {
    setup.driver.graph_launch(exec, setup.stream);
    if (++launches % 4096 == 0) setup.driver.stream_synchronize(setup.stream);
  }
  setup.driver.stream_synchronize(setup.stream);
}
BENCHMARK(BM_GraphLaunch)->Iterations(40000);

}  // namespace

BENCHMARK_MAIN();
