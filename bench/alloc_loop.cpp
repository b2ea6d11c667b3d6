// The allocation loop the memory overhead benchmark times: cuMemAlloc_v2 and
// cuMemFree_v2 through a driver reached by dlopen + dlsym (under the shim,
// dlsym hands out the shim's wrappers), as a library's caching allocator
// reaches it. Which driver - simulated or null - is decided by
// LD_LIBRARY_PATH; the benchmark is meant for the null driver
// (bench/null_driver), whose calls return at once, so that traced minus
// untraced is the shim's own cost per call.
#include <benchmark/benchmark.h>
#include <cuda.h>
#include <dlfcn.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>

namespace {

struct Driver {
  CUresult (*init)(unsigned int);
  CUresult (*device_get)(CUdevice*, int);
  CUresult (*primary_retain)(CUcontext*, CUdevice);
  CUresult (*set_current)(CUcontext);
  CUresult (*mem_alloc)(CUdeviceptr*, size_t);
  CUresult (*mem_free)(CUdeviceptr);
};

template <typename T>
void bind(void* library, const char* name, T& slot) {
  slot = reinterpret_cast<T>(dlsym(library, name));
  if (slot == nullptr) {
    std::fprintf(stderr, "alloc_loop: the driver has no %s\n", name);
    std::exit(2);
  }
}

struct Setup {
  Driver driver{};
  Setup() {
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      std::fprintf(stderr, "alloc_loop: %s\n", dlerror());
      std::exit(2);
    }
    bind(library, "cuInit", driver.init);
    bind(library, "cuDeviceGet", driver.device_get);
    bind(library, "cuDevicePrimaryCtxRetain", driver.primary_retain);
    bind(library, "cuCtxSetCurrent", driver.set_current);
    bind(library, "cuMemAlloc_v2", driver.mem_alloc);
    bind(library, "cuMemFree_v2", driver.mem_free);
    CUdevice device = 0;
    CUcontext context = nullptr;
    if (driver.init(0) != CUDA_SUCCESS || driver.device_get(&device, 0) != CUDA_SUCCESS ||
        driver.primary_retain(&context, device) != CUDA_SUCCESS || driver.set_current(context) != CUDA_SUCCESS) {
      std::fprintf(stderr, "alloc_loop: driver setup failed\n");
      std::exit(2);
    }
  }
};

Setup& setup() {
  static Setup instance;
  return instance;
}

// The shim's rings must not be full when a repetition starts, or the figure
// would be that of the (cheaper) drop path: pause for the writer first.
void pause_for_writer() {
  timespec pause{0, 100'000'000};
  nanosleep(&pause, nullptr);
}

// One allocation and one free per iteration: two traced calls.
void BM_MemAllocFree(benchmark::State& state) {
  Driver& driver = setup().driver;
  pause_for_writer();
  for (auto _ : state) {
    CUdeviceptr address = 0;
    driver.mem_alloc(&address, 4096);
    driver.mem_free(address);
  }
}
BENCHMARK(BM_MemAllocFree)->Iterations(20000);

// Allocations only (the null driver keeps nothing, so nothing grows).
void BM_MemAlloc(benchmark::State& state) {
  Driver& driver = setup().driver;
  pause_for_writer();
  for (auto _ : state) {
    CUdeviceptr address = 0;
    driver.mem_alloc(&address, 4096);
    benchmark::DoNotOptimize(address);
  }
}
BENCHMARK(BM_MemAlloc)->Iterations(40000);

}  // namespace

BENCHMARK_MAIN();
