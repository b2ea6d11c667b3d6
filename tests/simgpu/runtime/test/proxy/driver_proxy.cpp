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
    proxy.target =
        reinterpret_cast<decltype(&::cuGetProcAddress_v2)>(dlsym(handle, "cuGetProcAddress_v2"));
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
    real_symbol =
        dladdr(function, &info) != 0 && info.dli_sname != nullptr ? info.dli_sname : "unknown";
    real = reinterpret_cast<Result (*)(Arguments...)>(function);
    return reinterpret_cast<void*>(&call);
  }
};

// The functions whose variant the tests check, with the lowest requested
// version whose ABI matches cuda.h's prototype (the wrapper's type); older
// ABIs are handed through unwrapped. Slot = 2 * index + variant.
// clang-format off
#define SIMGPU_PROXY_WRAPPED(X)         \
  X(0, cuMemcpyHtoD, 3020)              \
  X(1, cuMemcpyHtoDAsync, 3020)         \
  X(2, cuMemcpyDtoH, 3020)              \
  X(3, cuMemsetD8, 3020)                \
  X(4, cuMemsetD8Async, 3020)           \
  X(5, cuStreamSynchronize, 2000)       \
  X(6, cuEventRecord, 2000)             \
  X(7, cuLaunchKernel, 4000)            \
  X(8, cuMemcpyAsync, 4000)             \
  X(9, cuStreamQuery, 2000)             \
  X(10, cuLibraryLoadData, 12000)       \
  X(11, cuLibraryUnload, 12000)         \
  X(12, cuLaunchKernelEx, 11060)        \
  X(13, cuLaunchCooperativeKernel, 9000) \
  X(14, cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, 7000) \
  X(15, cuOccupancyAvailableDynamicSMemPerBlock, 10020) \
  X(16, cuCtxResetPersistingL2Cache, 11000) \
  X(17, cuStreamSetAttribute, 11000)
// clang-format on

// cuGetExportTable hands out private, undocumented interface tables (the real
// runtime and NVIDIA's libraries use them). The proxy logs which table was
// asked for and what the driver answered, so a test can say exactly what a
// program needed that the simulator does not have.
decltype(&::cuGetExportTable) real_get_export_table = nullptr;

CUresult logging_get_export_table(const void** table, const CUuuid* id) {
  CUresult result = real_get_export_table(table, id);
  char entry[64] = "export-table ";
  for (int i = 0; i < 16 && id != nullptr; ++i) {
    std::snprintf(entry + 13 + 2 * i, 3, "%02x", static_cast<unsigned char>(id->bytes[i]));
  }
  note_call(std::string(entry) + " -> " + std::to_string(static_cast<int>(result)));
  return result;
}

CUresult proxy_get_proc_address_v1(const char* symbol, void** pfn, int cudaVersion,
                                   cuuint64_t flags);

void* wrap(const char* name, int version, bool per_thread, void* function) {
  const int variant = per_thread ? 1 : 0;
  // A caller that asks for cuGetProcAddress itself (the real static runtime
  // does) must keep going through the proxy, or later requests bypass it.
  if (std::strcmp(name, "cuGetProcAddress") == 0) {
    return version >= 12000 ? reinterpret_cast<void*>(&cuGetProcAddress_v2)
                            : reinterpret_cast<void*>(&proxy_get_proc_address_v1);
  }
  if (std::strcmp(name, "cuGetExportTable") == 0) {
    real_get_export_table = reinterpret_cast<decltype(&::cuGetExportTable)>(function);
    return reinterpret_cast<void*>(&logging_get_export_table);
  }
#define SIMGPU_PROXY_WRAP_CASE(index, function_name, lowest_version)                        \
  if (std::strcmp(name, #function_name) == 0 && version >= (lowest_version)) {              \
    return variant == 0                                                                     \
               ? Forwarder<decltype(&::function_name), 2 * (index)>::install(function)      \
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
  if (result == CUDA_SUCCESS && pfn != nullptr && *pfn != nullptr && symbol != nullptr) {
    *pfn = wrap(symbol, cudaVersion, (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0,
                *pfn);
  }
  return result;
}

}  // extern "C"

namespace {

CUresult proxy_get_proc_address_v1(const char* symbol, void** pfn, int cudaVersion,
                                   cuuint64_t flags) {
  return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, nullptr);
}

}  // namespace

extern "C" {

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

// The version of the first request for `name` with `flags`, 0 if none.
__attribute__((visibility("default"))) int simgpu_proxy_requested_version(
    const char* name, unsigned long long flags) {
  ProxyState& proxy = state();
  std::lock_guard<std::mutex> lock(proxy.mutex);
  for (const Request& request : proxy.requests) {
    if (request.name == name && request.flags == flags) return request.version;
  }
  return 0;
}

__attribute__((visibility("default"))) std::size_t simgpu_proxy_calls_to(const char* symbol) {
  ProxyState& proxy = state();
  std::lock_guard<std::mutex> lock(proxy.mutex);
  auto found = proxy.calls_by_symbol.find(symbol);
  return found != proxy.calls_by_symbol.end() ? found->second : 0;
}

}  // extern "C"
