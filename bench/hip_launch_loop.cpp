// The HIP launch loop the overhead benchmark times (figure m): hipLaunchKernel
// on one stream, through libamdhip64 reached with dlopen + dlsym (under the
// shim, dlsym hands out the shim's wrapper), over the null libamdhip64
// (bench/null_hip): what the shim adds to a launch, nothing else.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>

namespace {

struct Dim3 {
  unsigned x, y, z;
};

struct Hip {
  int (*init)(unsigned);
  int (*stream_create)(void**);
  int (*stream_synchronize)(void*);
  int (*launch)(const void*, Dim3, Dim3, void**, size_t, void*);
};

template <typename T>
void bind(void* library, const char* name, T& slot) {
  slot = reinterpret_cast<T>(dlsym(library, name));
  if (slot == nullptr) {
    std::fprintf(stderr, "hip_launch_loop: libamdhip64 has no %s\n", name);
    std::exit(2);
  }
}

void kernel_stub() {}

struct Setup {
  Hip hip{};
  void* stream = nullptr;
  Setup() {
    void* library = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      std::fprintf(stderr, "hip_launch_loop: %s\n", dlerror());
      std::exit(2);
    }
    bind(library, "hipInit", hip.init);
    bind(library, "hipStreamCreate", hip.stream_create);
    bind(library, "hipStreamSynchronize", hip.stream_synchronize);
    bind(library, "hipLaunchKernel", hip.launch);
    if (hip.init(0) != 0 || hip.stream_create(&stream) != 0) {
      std::fprintf(stderr, "hip_launch_loop: setup failed\n");
      std::exit(2);
    }
  }
};

void BM_HipLaunchKernel(benchmark::State& state) {
  static Setup setup;
  timespec pause{0, 100'000'000};
  nanosleep(&pause, nullptr);
  for (auto _ : state) {
    setup.hip.launch(reinterpret_cast<const void*>(&kernel_stub), Dim3{1, 1, 1}, Dim3{32, 1, 1}, nullptr, 0,
                     setup.stream);
  }
  setup.hip.stream_synchronize(setup.stream);
}
BENCHMARK(BM_HipLaunchKernel)->Iterations(40000);

}  // namespace

BENCHMARK_MAIN();
