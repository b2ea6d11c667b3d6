#include "driver_api.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "errors.h"
#include "tools_trace.h"

namespace simgpu_runtime {

std::atomic<const SimgpuToolsInterface*> g_tools{nullptr};

namespace {

// Stands in for a driver function that cuGetProcAddress_v2 did not hand out.
// Every driver function returns CUresult and the x86-64 SysV convention lets
// the caller pass arguments this function ignores, so one placeholder serves
// every signature: a runtime call that needs it fails with
// cudaErrorNotSupported instead of jumping through a null pointer.
CUresult missing_driver_function() { return CUDA_ERROR_NOT_SUPPORTED; }

std::atomic<bool> exiting{false};

void note_process_exit() { exiting.store(true, std::memory_order_release); }

struct LoadedDriver {
  cudaError_t status = cudaErrorInsufficientDriver;
  DriverApi legacy;
  DriverApi per_thread;
};

bool debug_enabled() {
  const char* value = std::getenv("SIMGPU_RUNTIME_DEBUG");
  return value != nullptr && value[0] != '\0' && value[0] != '0';
}

void resolve(decltype(&::cuGetProcAddress_v2) get_proc_address, const char* name, int version,
             cuuint64_t flags, void** slot) {
  CUdriverProcAddressQueryResult query_status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  void* function = nullptr;
  CUresult result = get_proc_address(name, &function, version, flags, &query_status);
  if (result != CUDA_SUCCESS || query_status != CU_GET_PROC_ADDRESS_SUCCESS ||
      function == nullptr) {
    if (debug_enabled()) {
      std::fprintf(stderr,
                   "simgpu libcudart: driver has no %s (version %d, flags %llu): CUresult %d, "
                   "status %d\n",
                   name, version, static_cast<unsigned long long>(flags), static_cast<int>(result),
                   static_cast<int>(query_status));
    }
    function = reinterpret_cast<void*>(&missing_driver_function);
  }
  *slot = function;
}

// Flags 0 (CU_GET_PROC_ADDRESS_DEFAULT) for the legacy table, as the real
// runtime passes: the driver treats it as the legacy-stream search.
void resolve_tables(decltype(&::cuGetProcAddress_v2) get_proc_address, DriverApi* legacy,
                    DriverApi* per_thread) {
  legacy->cuGetProcAddress_v2 = get_proc_address;
#define SIMGPU_RUNTIME_RESOLVE_LEGACY(name, version, per_thread_version) \
  resolve(get_proc_address, #name, version, 0, reinterpret_cast<void**>(&legacy->name));
  SIMGPU_RUNTIME_DRIVER_FUNCTIONS(SIMGPU_RUNTIME_RESOLVE_LEGACY)
#undef SIMGPU_RUNTIME_RESOLVE_LEGACY

  *per_thread = *legacy;
#define SIMGPU_RUNTIME_RESOLVE_PER_THREAD(name, version, per_thread_version) \
  if (per_thread_version != 0) {                                             \
    resolve(get_proc_address, #name, per_thread_version,                     \
            CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,                   \
            reinterpret_cast<void**>(&per_thread->name));                    \
  }
  SIMGPU_RUNTIME_DRIVER_FUNCTIONS(SIMGPU_RUNTIME_RESOLVE_PER_THREAD)
#undef SIMGPU_RUNTIME_RESOLVE_PER_THREAD
}

void load(LoadedDriver* loaded) {
  // RTLD_GLOBAL is not needed: nothing else resolves against the driver
  // through this handle. RTLD_NOW surfaces a broken driver here, not mid-call.
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    if (debug_enabled()) std::fprintf(stderr, "simgpu libcudart: %s\n", dlerror());
    loaded->status = cudaErrorInsufficientDriver;
    return;
  }
  // exit() runs atexit handlers in reverse order of registration, so this one
  // runs before the destructors the driver registered while it was loaded.
  std::atexit(note_process_exit);
  auto get_proc_address =
      reinterpret_cast<decltype(&::cuGetProcAddress_v2)>(dlsym(handle, "cuGetProcAddress_v2"));
  if (get_proc_address == nullptr) {
    loaded->status = cudaErrorInsufficientDriver;
    return;
  }
  resolve_tables(get_proc_address, &loaded->legacy, &loaded->per_thread);
  // A driver that is not the simulator has no tools interface: nothing traced.
  if (auto get_tools = reinterpret_cast<PFN_simgpuGetToolsInterface>(dlsym(handle, "simgpuGetToolsInterface"))) {
    const SimgpuToolsInterface* tools = nullptr;
    if (get_tools(SIMGPU_TOOLS_VERSION, &tools) == 0) g_tools.store(tools, std::memory_order_release);
  }
  CUresult init_result = loaded->legacy.cuInit(0);
  loaded->status = init_result == CUDA_SUCCESS ? cudaSuccess : runtime_error_from(init_result);
}

// Never destroyed: the driver stays loaded until the process exits, and
// static destructors of other objects may still call into the runtime.
LoadedDriver* loaded_driver() {
  static LoadedDriver* loaded = [] {
    auto* instance = new LoadedDriver;
    load(instance);
    return instance;
  }();
  return loaded;
}

}  // namespace

cudaError_t load_driver(DefaultStream mode, const DriverApi** api) {
  LoadedDriver* loaded = loaded_driver();
  *api = mode == DefaultStream::per_thread ? &loaded->per_thread : &loaded->legacy;
  return loaded->status;
}

bool process_is_exiting() { return exiting.load(std::memory_order_acquire); }

bool driver_lacks(const void* function) {
  return function == reinterpret_cast<const void*>(&missing_driver_function);
}

}  // namespace simgpu_runtime
