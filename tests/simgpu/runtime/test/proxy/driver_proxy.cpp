// A stand-in libcuda.so.1 for the routing tests. It exports cuGetProcAddress_v2
// and nothing else of the driver API, so a runtime that looked up any other
// driver symbol with dlsym would fail against it. Each request is forwarded
// to the simulated driver (SIMGPU_PROXY_TARGET) and logged; for a few
// functions the proxy hands out a wrapper that records which exported driver
// symbol the call reached (via dladdr), so a test can tell cuMemcpyHtoD_v2
// from cuMemcpyHtoD_v2_ptds. With SIMGPU_PROXY_LOG set, those counts are
// written to that file at exit (for tests that run whole programs).
#include <cuda.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Request {
  std::string name;
  int version;
  cuuint64_t flags;
};

struct ProxyState {
  std::mutex mutex;
  std::vector<Request> requests;
  std::map<std::string, std::size_t> calls_by_symbol;
  decltype(&::cuGetProcAddress_v2) target = nullptr;
};

ProxyState& state() {
  static auto* instance = new ProxyState;
  return *instance;
}

decltype(&::cuGetProcAddress_v2) target_get_proc_address() {
  ProxyState& proxy = state();
  std::lock_guard<std::mutex> lock(proxy.mutex);
  if (proxy.target == nullptr) {
    const char* path = std::getenv("SIMGPU_PROXY_TARGET");
    void* handle = path != nullptr ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
    if (handle == nullptr) {
      std::fprintf(stderr, "driver proxy: cannot load SIMGPU_PROXY_TARGET=%s: %s\n",
                   path != nullptr ? path : "(unset)", dlerror());
      return nullptr;
    }
    proxy.target = reinterpret_cast<decltype(&::cuGetProcAddress_v2)>(
        dlsym(handle, "cuGetProcAddress_v2"));
  }
  return proxy.target;
}

void note_call(const std::string& symbol) {
  ProxyState& proxy = state();
  std::lock_guard<std::mutex> lock(proxy.mutex);
  ++proxy.calls_by_symbol[symbol];
}

// One forwarding wrapper per (function, variant) slot. `real_symbol` is the
// name dladdr gives for the driver function the request resolved to.
template <typename Function, int Slot>
struct Forwarder;

template <typename Result, typename... Arguments, int Slot>
struct Forwarder<Result (*)(Arguments...), Slot> {
  static inline Result (*real)(Arguments...) = nullptr;
  static inline std::string real_symbol;

  static Result call(Arguments... arguments) {
    note_call(real_symbol);
    return real(arguments...);
  }

  static void* install(void* function) {
    Dl_info info{};
    real_symbol = dladdr(function, &info) != 0 && info.dli_sname != nullptr
                      ? info.dli_sname
                      : "unknown";
    real = reinterpret_cast<Result (*)(Arguments...)>(function);
    return reinterpret_cast<void*>(&call);
  }
};

// The functions whose variant the tests check; slot = 2 * index + variant.
#define SIMGPU_PROXY_WRAPPED(X)                                                           \
  X(0, cuMemcpyHtoD) X(1, cuMemcpyHtoDAsync) X(2, cuMemcpyDtoH) X(3, cuMemsetD8)          \
  X(4, cuMemsetD8Async) X(5, cuStreamSynchronize) X(6, cuEventRecord) X(7, cuLaunchKernel) \
  X(8, cuMemcpyAsync) X(9, cuStreamQuery)

void* wrap(const char* name, bool per_thread, void* function) {
  const int variant = per_thread ? 1 : 0;
#define SIMGPU_PROXY_WRAP_CASE(index, function_name)                                          \
  if (std::strcmp(name, #function_name) == 0) {                                              \
    return variant == 0                                                                       \
               ? Forwarder<decltype(&::function_name), 2 * (index)>::install(function)       \
               : Forwarder<decltype(&::function_name), 2 * (index) + 1>::install(function); \
  }
  SIMGPU_PROXY_WRAPPED(SIMGPU_PROXY_WRAP_CASE)
#undef SIMGPU_PROXY_WRAP_CASE
  return function;
}

__attribute__((destructor)) void write_log() {
  const char* path = std::getenv("SIMGPU_PROXY_LOG");
  if (path == nullptr) return;
  FILE* log = std::fopen(path, "w");
  if (log == nullptr) return;
  ProxyState& proxy = state();
  std::lock_guard<std::mutex> lock(proxy.mutex);
  for (const Request& request : proxy.requests) {
    std::fprintf(log, "request %s %d %llu\n", request.name.c_str(), request.version,
                 static_cast<unsigned long long>(request.flags));
  }
  for (const auto& [symbol, count] : proxy.calls_by_symbol) {
    std::fprintf(log, "call %s %zu\n", symbol.c_str(), count);
  }
  std::fclose(log);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(
    const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
    CUdriverProcAddressQueryResult* symbolStatus) {
  auto target = target_get_proc_address();
  if (target == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  {
    ProxyState& proxy = state();
    std::lock_guard<std::mutex> lock(proxy.mutex);
    proxy.requests.push_back(Request{symbol != nullptr ? symbol : "", cudaVersion, flags});
  }
  CUresult result = target(symbol, pfn, cudaVersion, flags, symbolStatus);
  // Only the CUDA 12+ ABI matches the wrappers' signatures (cuda.h's macros).
  if (result == CUDA_SUCCESS && pfn != nullptr && *pfn != nullptr && cudaVersion >= 12000) {
    *pfn = wrap(symbol, (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0, *pfn);
  }
  return result;
}

// Test-side queries, found with dlopen("libcuda.so.1", RTLD_NOLOAD) + dlsym.
__attribute__((visibility("default"))) std::size_t simgpu_proxy_request_count(
    const char* name, unsigned long long flags) {
  ProxyState& proxy = state();
  std::lock_guard<std::mutex> lock(proxy.mutex);
  std::size_t count = 0;
  for (const Request& request : proxy.requests) {
    if (request.name == name && request.flags == flags) ++count;
  }
  return count;
}

__attribute__((visibility("default"))) int simgpu_proxy_lowest_requested_version() {
  ProxyState& proxy = state();
  std::lock_guard<std::mutex> lock(proxy.mutex);
  int lowest = 0;
  for (const Request& request : proxy.requests) {
    if (lowest == 0 || request.version < lowest) lowest = request.version;
  }
  return lowest;
}

__attribute__((visibility("default"))) std::size_t simgpu_proxy_calls_to(const char* symbol) {
  ProxyState& proxy = state();
  std::lock_guard<std::mutex> lock(proxy.mutex);
  auto found = proxy.calls_by_symbol.find(symbol);
  return found != proxy.calls_by_symbol.end() ? found->second : 0;
}

}  // extern "C"
