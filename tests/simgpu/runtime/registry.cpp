#include "registry.h"

#include <fatbinary_section.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "context.h"
#include "errors.h"

namespace simgpu_runtime {
namespace {

struct FatbinRegistration {
  // nvcc's host code keeps the handle in a `void**` and passes it back; the
  // first word is the wrapper so that a dereference of the handle is harmless.
  const __fatBinC_Wrapper_t* wrapper = nullptr;
  CUlibrary library = nullptr;
  cudaError_t load_error = cudaSuccess;  // sticky: a bad image stays bad
};

struct RegisteredFunction {
  FatbinRegistration* fatbin = nullptr;
  const void* host_stub = nullptr;
  std::string device_name;
  CUkernel kernel = nullptr;
};

struct RegisteredVariable {
  FatbinRegistration* fatbin = nullptr;
  std::string device_name;
  std::size_t bytes = 0;
  bool managed = false;
  void** managed_host_pointer = nullptr;
};

struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<FatbinRegistration>> fatbins;
  std::unordered_map<const void*, std::unique_ptr<RegisteredFunction>> functions_by_host_stub;
  std::unordered_map<const void*, RegisteredFunction*> functions_by_kernel;
  std::unordered_map<const void*, RegisteredVariable> variables_by_host_address;
};

// Never destroyed: __cudaUnregisterFatBinary runs from atexit handlers that
// may come after this library's static destructors.
Registry& registry() {
  static auto* instance = new Registry;
  return *instance;
}

FatbinRegistration* registration_of(void** handle) {
  return reinterpret_cast<FatbinRegistration*>(handle);
}

cudaError_t load_library_locked(const DriverApi* api, FatbinRegistration* fatbin) {
  if (fatbin->library != nullptr || fatbin->load_error != cudaSuccess) return fatbin->load_error;
  if (fatbin->wrapper == nullptr || fatbin->wrapper->magic != FATBINC_MAGIC ||
      fatbin->wrapper->data == nullptr) {
    fatbin->load_error = cudaErrorInvalidKernelImage;
    return fatbin->load_error;
  }
  CUresult result = api->cuLibraryLoadData(&fatbin->library, fatbin->wrapper->data, nullptr,
                                           nullptr, 0, nullptr, nullptr, 0);
  if (result != CUDA_SUCCESS) {
    fatbin->library = nullptr;
    // An image problem is permanent; anything else (no device yet) may pass.
    cudaError_t error = runtime_error_from(result);
    if (error == cudaErrorInvalidKernelImage || error == cudaErrorNoKernelImageForDevice) {
      fatbin->load_error = error;
    }
    return error;
  }
  return cudaSuccess;
}

cudaError_t kernel_of_locked(const DriverApi* api, RegisteredFunction* function, CUkernel* kernel) {
  if (function->kernel == nullptr) {
    if (cudaError_t error = load_library_locked(api, function->fatbin)) return error;
    CUresult result = api->cuLibraryGetKernel(&function->kernel, function->fatbin->library,
                                              function->device_name.c_str());
    if (result != CUDA_SUCCESS) {
      function->kernel = nullptr;
      return result == CUDA_ERROR_NOT_FOUND ? cudaErrorInvalidDeviceFunction
                                            : runtime_error_from(result);
    }
    registry().functions_by_kernel[function->kernel] = function;
  }
  *kernel = function->kernel;
  return cudaSuccess;
}

// Bumped whenever a library is unloaded: the driver may hand a later
// library's kernel the address of an unloaded one, so cached CUfunctions from
// before an unload must not be trusted.
std::atomic<std::uint64_t> unload_epoch{0};

struct CachedFunction {
  CUcontext context = nullptr;
  std::uint64_t context_generation = 0;
  std::uint64_t unload_epoch = 0;
  CUfunction function = nullptr;
};

}  // namespace

void** register_fatbin(void* fatbin_wrapper) {
  auto fatbin = std::make_unique<FatbinRegistration>();
  fatbin->wrapper = static_cast<const __fatBinC_Wrapper_t*>(fatbin_wrapper);
  void** handle = reinterpret_cast<void**>(fatbin.get());
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().fatbins.push_back(std::move(fatbin));
  return handle;
}

void end_fatbin_registration(void** /*handle*/) {
  // Loading is lazy (first kernel or variable use), so there is nothing to
  // finish here; the real runtime also defers the driver until first use.
}

void unregister_fatbin(void** handle) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  FatbinRegistration* fatbin = registration_of(handle);
  for (auto it = reg.functions_by_host_stub.begin(); it != reg.functions_by_host_stub.end();) {
    if (it->second->fatbin == fatbin) {
      reg.functions_by_kernel.erase(it->second->kernel);
      it = reg.functions_by_host_stub.erase(it);
    } else {
      ++it;
    }
  }
  std::erase_if(reg.variables_by_host_address,
                [fatbin](const auto& entry) { return entry.second.fatbin == fatbin; });
  // At process exit the driver may already be torn down (its destructors ran
  // before this atexit handler); the process is going away anyway.
  if (fatbin->library != nullptr && !process_is_exiting()) {
    const DriverApi* api = nullptr;
    if (load_driver(DefaultStream::legacy, &api) == cudaSuccess) {
      api->cuLibraryUnload(fatbin->library);
    }
    unload_epoch.fetch_add(1, std::memory_order_acq_rel);
  }
  std::erase_if(reg.fatbins, [fatbin](const auto& owned) { return owned.get() == fatbin; });
}

void register_function(void** handle, const void* host_stub, const char* device_name) {
  if (handle == nullptr || host_stub == nullptr || device_name == nullptr) return;
  auto function = std::make_unique<RegisteredFunction>();
  function->fatbin = registration_of(handle);
  function->host_stub = host_stub;
  function->device_name = device_name;
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().functions_by_host_stub[host_stub] = std::move(function);
}

void register_variable(void** handle, const void* host_address, const char* device_name,
                       std::size_t bytes, bool managed, void** managed_host_pointer) {
  if (handle == nullptr || host_address == nullptr || device_name == nullptr) return;
  RegisteredVariable variable;
  variable.fatbin = registration_of(handle);
  variable.device_name = device_name;
  variable.bytes = bytes;
  variable.managed = managed;
  variable.managed_host_pointer = managed_host_pointer;
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().variables_by_host_address[host_address] = std::move(variable);
}

cudaError_t kernel_for(const DriverApi* api, const void* function, CUkernel* kernel) {
  if (function == nullptr) return cudaErrorInvalidDeviceFunction;
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  auto by_stub = reg.functions_by_host_stub.find(function);
  if (by_stub != reg.functions_by_host_stub.end()) {
    return kernel_of_locked(api, by_stub->second.get(), kernel);
  }
  auto by_kernel = reg.functions_by_kernel.find(function);
  if (by_kernel != reg.functions_by_kernel.end()) {
    *kernel = by_kernel->second->kernel;
    return cudaSuccess;
  }
  return cudaErrorInvalidDeviceFunction;
}

cudaError_t function_for(const DriverApi* api, CUkernel kernel, CUfunction* function) {
  // Thread-local so the launch path takes no lock; a CUfunction belongs to
  // one context and dies with it, hence the context and generation check.
  thread_local std::unordered_map<CUkernel, CachedFunction> cache;
  CUcontext context = nullptr;
  if (CUresult result = api->cuCtxGetCurrent(&context)) return runtime_error_from(result);
  std::uint64_t generation = context_generation();
  std::uint64_t epoch = unload_epoch.load(std::memory_order_acquire);
  CachedFunction& cached = cache[kernel];
  if (cached.function != nullptr && cached.context == context &&
      cached.context_generation == generation && cached.unload_epoch == epoch) {
    *function = cached.function;
    return cudaSuccess;
  }
  CUfunction resolved = nullptr;
  CUresult result = api->cuKernelGetFunction(&resolved, kernel);
  if (result != CUDA_SUCCESS) {
    cache.erase(kernel);
    return result == CUDA_ERROR_INVALID_HANDLE ? cudaErrorInvalidDeviceFunction
                                               : runtime_error_from(result);
  }
  cached = CachedFunction{context, generation, epoch, resolved};
  *function = resolved;
  return cudaSuccess;
}

const char* device_name_of(const void* function) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  auto by_stub = reg.functions_by_host_stub.find(function);
  if (by_stub != reg.functions_by_host_stub.end()) return by_stub->second->device_name.c_str();
  auto by_kernel = reg.functions_by_kernel.find(function);
  if (by_kernel != reg.functions_by_kernel.end()) return by_kernel->second->device_name.c_str();
  return nullptr;
}

cudaError_t variable_address(const DriverApi* api, const void* host_address, CUdeviceptr* address,
                             std::size_t* bytes) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  auto found = reg.variables_by_host_address.find(host_address);
  if (found == reg.variables_by_host_address.end()) {
    // nvcc's host code names a __managed__ variable through the pointer
    // __cudaInitModule filled in, so its "symbol" is the managed address.
    found = std::find_if(
        reg.variables_by_host_address.begin(), reg.variables_by_host_address.end(),
        [host_address](const auto& entry) {
          const RegisteredVariable& candidate = entry.second;
          return candidate.managed && candidate.managed_host_pointer != nullptr &&
                 *candidate.managed_host_pointer == host_address;
        });
    if (found == reg.variables_by_host_address.end()) return cudaErrorInvalidSymbol;
  }
  RegisteredVariable& variable = found->second;
  if (cudaError_t error = load_library_locked(api, variable.fatbin)) return error;
  std::size_t device_bytes = 0;
  CUlibrary library = variable.fatbin->library;
  const char* name = variable.device_name.c_str();
  CUresult result = variable.managed
                        ? api->cuLibraryGetManaged(address, &device_bytes, library, name)
                        : api->cuLibraryGetGlobal(address, &device_bytes, library, name);
  if (result != CUDA_SUCCESS) {
    return result == CUDA_ERROR_NOT_FOUND ? cudaErrorInvalidSymbol : runtime_error_from(result);
  }
  *bytes = device_bytes;
  return cudaSuccess;
}

bool initialize_module(const DriverApi* api, void** handle) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  FatbinRegistration* fatbin = registration_of(handle);
  if (load_library_locked(api, fatbin) != cudaSuccess) return false;
  for (auto& [host_address, variable] : reg.variables_by_host_address) {
    if (variable.fatbin != fatbin || !variable.managed ||
        variable.managed_host_pointer == nullptr) {
      continue;
    }
    CUdeviceptr address = 0;
    std::size_t bytes = 0;
    if (api->cuLibraryGetManaged(&address, &bytes, fatbin->library, variable.device_name.c_str()) !=
        CUDA_SUCCESS) {
      return false;
    }
    *variable.managed_host_pointer = reinterpret_cast<void*>(address);
  }
  return true;
}

}  // namespace simgpu_runtime
