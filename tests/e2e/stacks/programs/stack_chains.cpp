// stack_chains: CUDA calls made through known call chains, for the call
// stack tests (tests/e2e/stacks). After start it dlopens the library given by
// --library (libstack_chain_lib*.so) and calls it from level_one ->
// level_two, --repeat times; then synchronizes from main. The tests find the
// lines by their "@site:" markers.
//
//   stack_chains --library PATH [--repeat N] [--deepbind] [--runpath-library NAME]
//                [--swap FIRST SECOND]
//
// --deepbind     dlopen the library with RTLD_DEEPBIND
// --runpath-library NAME
//                dlopen NAME by bare name (found through this program's
//                RUNPATH, $ORIGIN/runpath_libs) and zero a buffer with it
// --swap FIRST SECOND
//                dlopen FIRST, memset through its swap_call, dlclose it;
//                then the same with SECOND (built to land at the same
//                address with other unwind rules: tests/unit/stacks/walker/
//                swap_library.S); prints both addresses
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct ChainLibrary {
  int (*copy)(void* dst, const void* src, size_t bytes);
  int (*set)(void* dst, size_t bytes);
};

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "stack_chains: %s\n", what.c_str());
  std::exit(1);
}

__attribute__((noinline)) int level_two(const ChainLibrary& library, void* device, const void* host,
                                        size_t bytes) {
  const int copy = library.copy(device, host, bytes);  // @site:level_two_copy
  const int set = library.set(device, bytes);          // @site:level_two_set
  asm volatile("" ::: "memory");
  return copy != 0 ? copy : set;
}

__attribute__((noinline)) int level_one(const ChainLibrary& library, void* device, const void* host,
                                        size_t bytes) {
  const int result = level_two(library, device, host, bytes);  // @site:level_one_call
  asm volatile("" ::: "memory");
  return result;
}

// Called back by a swap library's swap_call.
__attribute__((noinline)) void swap_callback(void* device) {
  if (cudaMemset(device, 0, 64) != cudaSuccess) fail("cudaMemset through a swap library failed");  // @site:swap_set
  asm volatile("" ::: "memory");
}

void* memset_through(const std::string& path, void* device) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) fail(std::string("dlopen: ") + dlerror());
  auto* swap_call = reinterpret_cast<void (*)(void (*)(void*), void*)>(dlsym(handle, "swap_call"));
  if (swap_call == nullptr) fail("the swap library lacks swap_call");
  swap_call(swap_callback, device);  // @site:swap_call
  dlclose(handle);
  return reinterpret_cast<void*>(swap_call);
}

}  // namespace

int main(int argc, char** argv) {
  std::string library_path, runpath_library, swap_first, swap_second;
  int repeat = 1;
  bool deepbind = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--library" && i + 1 < argc) library_path = argv[++i];
    else if (arg == "--repeat" && i + 1 < argc) repeat = std::atoi(argv[++i]);
    else if (arg == "--deepbind") deepbind = true;
    else if (arg == "--runpath-library" && i + 1 < argc) runpath_library = argv[++i];
    else if (arg == "--swap" && i + 2 < argc) {
      swap_first = argv[++i];
      swap_second = argv[++i];
    }
    else fail("usage: stack_chains --library PATH [--repeat N] [--deepbind] [--runpath-library NAME] "
              "[--swap FIRST SECOND]");
  }
  if (library_path.empty()) fail("--library is required");

  constexpr size_t kBytes = 4096;
  std::vector<unsigned char> host(kBytes, 7);
  void* device = nullptr;
  if (cudaMalloc(&device, kBytes) != cudaSuccess) fail("cudaMalloc failed");

  // Loaded after the profiler started: its module must still be mapped.
  void* handle = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL | (deepbind ? RTLD_DEEPBIND : 0));
  if (handle == nullptr) fail(std::string("dlopen: ") + dlerror());
  ChainLibrary library{};
  library.copy = reinterpret_cast<decltype(library.copy)>(dlsym(handle, "chain_copy"));
  library.set = reinterpret_cast<decltype(library.set)>(dlsym(handle, "chain_set"));
  if (library.copy == nullptr || library.set == nullptr) fail("the library lacks chain_copy/chain_set");

  for (int i = 0; i < repeat; ++i)
    if (level_one(library, device, host.data(), kBytes) != 0) fail("a CUDA call failed");  // @site:main_call
  if (cudaDeviceSynchronize() != cudaSuccess) fail("cudaDeviceSynchronize failed");  // @site:main_sync

  if (!runpath_library.empty()) {
    void* runpath = dlopen(runpath_library.c_str(), RTLD_NOW);
    if (runpath == nullptr) fail(std::string("dlopen by RUNPATH: ") + dlerror());
    auto* zero = reinterpret_cast<int (*)(void*, size_t)>(dlsym(runpath, "runpath_target_zero"));
    if (zero == nullptr || zero(device, kBytes) != 0) fail("runpath_target_zero failed");
    std::printf("stack_chains: runpath library loaded\n");
  }
  if (!swap_first.empty()) {
    void* first = memset_through(swap_first, device);
    void* second = memset_through(swap_second, device);
    std::printf("stack_chains: swap_call at %p then at %p\n", first, second);
  }
  cudaFree(device);
  std::printf("stack_chains: ok (%d repeats)\n", repeat);
  return 0;
}
