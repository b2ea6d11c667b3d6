#include "context.h"

#include <atomic>
#include <mutex>
#include <vector>

#include "errors.h"

namespace simgpu_runtime {
namespace {

struct PrimaryContexts {
  std::mutex mutex;
  bool counted = false;
  std::vector<CUcontext> by_device;  // nullptr: not retained (yet, or since a reset)
  std::atomic<std::uint64_t> generation{1};
};

// Never destroyed: program destructors may still call the runtime at exit.
PrimaryContexts& primaries() {
  static auto* contexts = new PrimaryContexts;
  return *contexts;
}

thread_local int selected_device = 0;
// Generation in which this thread last made a primary context current; 0 if
// it never did (then a current context came from the driver API, or none).
thread_local std::uint64_t bound_generation = 0;

cudaError_t count_devices_locked(const DriverApi* api, PrimaryContexts& contexts) {
  if (contexts.counted) return cudaSuccess;
  int count = 0;
  CUresult result = api->cuDeviceGetCount(&count);
  if (result != CUDA_SUCCESS) return runtime_error_from(result);
  contexts.by_device.assign(static_cast<std::size_t>(count), nullptr);
  contexts.counted = true;
  return cudaSuccess;
}

cudaError_t bind_primary(const DriverApi* api, int device) {
  CUcontext context = nullptr;
  if (cudaError_t error = primary_context(api, device, &context)) return error;
  if (CUresult result = api->cuCtxSetCurrent(context)) return runtime_error_from(result);
  selected_device = device;
  bound_generation = primaries().generation.load(std::memory_order_acquire);
  return cudaSuccess;
}

}  // namespace

cudaError_t enter(DefaultStream mode, const DriverApi** api) { return load_driver(mode, api); }

cudaError_t enter_with_context(DefaultStream mode, const DriverApi** api) {
  if (cudaError_t error = load_driver(mode, api)) return error;
  CUcontext current = nullptr;
  if (CUresult result = (*api)->cuCtxGetCurrent(&current)) return runtime_error_from(result);
  std::uint64_t generation = primaries().generation.load(std::memory_order_acquire);
  if (current != nullptr && (bound_generation == 0 || bound_generation == generation)) {
    return cudaSuccess;
  }
  return bind_primary(*api, selected_device);
}

cudaError_t current_device(const DriverApi* api, int* device) {
  CUcontext current = nullptr;
  std::uint64_t generation = primaries().generation.load(std::memory_order_acquire);
  bool binding_is_fresh = bound_generation == 0 || bound_generation == generation;
  if (binding_is_fresh && api->cuCtxGetCurrent(&current) == CUDA_SUCCESS && current != nullptr) {
    CUdevice ordinal = 0;
    if (api->cuCtxGetDevice(&ordinal) == CUDA_SUCCESS) {
      *device = ordinal;
      return cudaSuccess;
    }
  }
  *device = selected_device;
  return cudaSuccess;
}

cudaError_t select_device(const DriverApi* api, int device) { return bind_primary(api, device); }

cudaError_t primary_context(const DriverApi* api, int device, CUcontext* context) {
  PrimaryContexts& contexts = primaries();
  std::lock_guard<std::mutex> lock(contexts.mutex);
  if (cudaError_t error = count_devices_locked(api, contexts)) return error;
  if (device < 0 || static_cast<std::size_t>(device) >= contexts.by_device.size()) {
    return cudaErrorInvalidDevice;
  }
  CUcontext& slot = contexts.by_device[static_cast<std::size_t>(device)];
  if (slot == nullptr) {
    CUdevice handle = 0;
    if (CUresult result = api->cuDeviceGet(&handle, device)) return runtime_error_from(result);
    if (CUresult result = api->cuDevicePrimaryCtxRetain(&slot, handle)) {
      slot = nullptr;
      return runtime_error_from(result);
    }
  }
  *context = slot;
  return cudaSuccess;
}

cudaError_t reset_current_device(const DriverApi* api) {
  int device = 0;
  current_device(api, &device);
  PrimaryContexts& contexts = primaries();
  std::lock_guard<std::mutex> lock(contexts.mutex);
  if (cudaError_t error = count_devices_locked(api, contexts)) return error;
  if (device < 0 || static_cast<std::size_t>(device) >= contexts.by_device.size()) {
    return cudaErrorInvalidDevice;
  }
  CUdevice handle = 0;
  if (CUresult result = api->cuDeviceGet(&handle, device)) return runtime_error_from(result);
  CUresult result = api->cuDevicePrimaryCtxReset(handle);
  // Retained again on next use: the driver may hand out a new handle.
  contexts.by_device[static_cast<std::size_t>(device)] = nullptr;
  contexts.generation.fetch_add(1, std::memory_order_acq_rel);
  selected_device = device;
  return runtime_error_from(result);
}

std::uint64_t context_generation() {
  return primaries().generation.load(std::memory_order_acquire);
}

}  // namespace simgpu_runtime
