#include "hip_state.h"

#include "amd_devices.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace simhip {
namespace {

struct ErrorName {
  int value;
  const char* name;
};
constexpr ErrorName kErrors[] = {
#include "hip_errors.inc"
};

Machine g_machine;
hipError_t g_init_result = hipErrorNotInitialized;
std::once_flag g_init_once;

constexpr int kMaxDevices = 64;
std::mutex g_primary_mutex;
CUcontext g_primary[kMaxDevices] = {};

thread_local int tl_device = 0;
thread_local CUcontext tl_context = nullptr;
thread_local hipError_t tl_last_error = hipSuccess;

}  // namespace

hipError_t to_hip(CUresult result) noexcept {
  for (const ErrorName& error : kErrors)
    if (error.value == static_cast<int>(result)) return static_cast<hipError_t>(result);
  return hipErrorUnknown;
}

const char* error_name(hipError_t error) noexcept {
  for (const ErrorName& e : kErrors)
    if (e.value == static_cast<int>(error)) return e.name;
  return "hipErrorUnknown";
}

const Machine& machine() noexcept { return g_machine; }

hipError_t initialize() noexcept {
  std::call_once(g_init_once, [] {
    if (const char* arch = std::getenv("SIMGPU_HIP_ARCH")) g_machine.arch = arch;
    if (const char* name = std::getenv("SIMGPU_HIP_DEVICE_NAME")) g_machine.name = name;
    if (const char* load = std::getenv("SIMGPU_HIP_CODE_OBJECT_LOAD_NS")) {
      char* end = nullptr;
      const long long ns = std::strtoll(load, &end, 10);
      if (end == load || *end != '\0' || ns < 0) {
        std::fprintf(stderr, "simgpu: HIP initialization failed: SIMGPU_HIP_CODE_OBJECT_LOAD_NS='%s' is not ns\n",
                     load);
        g_init_result = hipErrorInvalidValue;
        return;
      }
      g_machine.code_object_load_ns = ns;
    }
    install_amd_personality();
    CUresult result = cuInit(0);
    if (result == CUDA_SUCCESS) result = cuDeviceGetCount(&g_machine.device_count);
    g_init_result = to_hip(result);
    if (g_machine.device_count > kMaxDevices) g_machine.device_count = kMaxDevices;
  });
  return g_init_result;
}

CUcontext primary_context(int device) noexcept {
  std::lock_guard lock(g_primary_mutex);
  return device >= 0 && device < kMaxDevices ? g_primary[device] : nullptr;
}

hipError_t enter_device() noexcept {
  if (hipError_t ready = initialize(); ready != hipSuccess) return ready;
  const int device = tl_device;
  if (device < 0 || device >= g_machine.device_count) return hipErrorInvalidDevice;
  CUcontext context;
  {
    std::lock_guard lock(g_primary_mutex);
    if (g_primary[device] == nullptr) {
      if (CUresult r = cuDevicePrimaryCtxRetain(&g_primary[device], device); r != CUDA_SUCCESS) return to_hip(r);
    }
    context = g_primary[device];
  }
  if (tl_context != context) {
    if (CUresult r = cuCtxSetCurrent(context); r != CUDA_SUCCESS) return to_hip(r);
    tl_context = context;
  }
  return hipSuccess;
}

int current_device() noexcept { return tl_device; }

hipError_t set_current_device(int device) noexcept {
  if (hipError_t ready = initialize(); ready != hipSuccess) return ready;
  if (device < 0 || device >= g_machine.device_count) return hipErrorInvalidDevice;
  tl_device = device;
  return enter_device();
}

void set_last_error(hipError_t error) noexcept { tl_last_error = error; }

hipError_t take_last_error() noexcept {
  const hipError_t error = tl_last_error;
  tl_last_error = hipSuccess;
  return error;
}

hipError_t peek_last_error() noexcept { return tl_last_error; }

}  // namespace simhip

using namespace simhip;

extern "C" {

const char* hipGetErrorName(hipError_t hip_error) { return error_name(hip_error); }
// HIP 5.2 answers hipGetErrorString with the error's name too.
const char* hipGetErrorString(hipError_t hipError) { return error_name(hipError); }
hipError_t hipGetLastError(void) { return take_last_error(); }
hipError_t hipPeekAtLastError(void) { return peek_last_error(); }

hipError_t hipInit(unsigned int flags) {
  return api([&] { return flags != 0 ? hipErrorInvalidValue : initialize(); });
}

hipError_t hipDriverGetVersion(int* driverVersion) {
  return api([&] {
    if (driverVersion == nullptr) return hipErrorInvalidValue;
    *driverVersion = HIP_VERSION;
    return hipSuccess;
  });
}

hipError_t hipRuntimeGetVersion(int* runtimeVersion) {
  return api([&] {
    if (runtimeVersion == nullptr) return hipErrorInvalidValue;
    *runtimeVersion = HIP_VERSION;
    return hipSuccess;
  });
}

hipError_t hipGetDeviceCount(int* count) {
  return api([&] {
    if (count == nullptr) return hipErrorInvalidValue;
    *count = 0;
    if (hipError_t ready = initialize(); ready != hipSuccess) return ready;
    *count = machine().device_count;
    return hipSuccess;
  });
}

hipError_t hipSetDevice(int deviceId) { return api([&] { return set_current_device(deviceId); }); }

hipError_t hipGetDevice(int* deviceId) {
  return api([&] {
    if (deviceId == nullptr) return hipErrorInvalidValue;
    if (hipError_t ready = initialize(); ready != hipSuccess) return ready;
    *deviceId = current_device();
    return hipSuccess;
  });
}

}  // extern "C"
