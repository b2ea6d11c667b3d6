#include "launcher/gpu_metrics/nvml_library.h"

#include <dlfcn.h>

namespace proflaunch::launcher::gpu_metrics {

bool NvmlLibrary::open(std::string* why) {
  handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    *why = error != nullptr ? error : "libnvidia-ml.so.1 not found";
    return false;
  }
  // An entry point that is missing stays null: its metrics are then left
  // out as unsupported (an older driver lacks the newer ones).
  auto resolve = [&](auto& function, const char* name) {
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(handle, name));
  };
  resolve(Init_v2, "nvmlInit_v2");
  resolve(Shutdown, "nvmlShutdown");
  resolve(ErrorString, "nvmlErrorString");
  resolve(DeviceGetCount_v2, "nvmlDeviceGetCount_v2");
  resolve(DeviceGetHandleByIndex_v2, "nvmlDeviceGetHandleByIndex_v2");
  resolve(DeviceGetName, "nvmlDeviceGetName");
  resolve(DeviceGetUUID, "nvmlDeviceGetUUID");
  resolve(DeviceGetPciInfo_v3, "nvmlDeviceGetPciInfo_v3");
  resolve(DeviceGetUtilizationRates, "nvmlDeviceGetUtilizationRates");
  resolve(DeviceGetMemoryInfo, "nvmlDeviceGetMemoryInfo");
  resolve(DeviceGetClockInfo, "nvmlDeviceGetClockInfo");
  resolve(DeviceGetPowerUsage, "nvmlDeviceGetPowerUsage");
  resolve(DeviceGetEnforcedPowerLimit, "nvmlDeviceGetEnforcedPowerLimit");
  resolve(DeviceGetTemperature, "nvmlDeviceGetTemperature");
  resolve(DeviceGetCurrentClocksThrottleReasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  resolve(DeviceGetPcieThroughput, "nvmlDeviceGetPcieThroughput");
  resolve(DeviceGetCurrPcieLinkGeneration, "nvmlDeviceGetCurrPcieLinkGeneration");
  resolve(DeviceGetCurrPcieLinkWidth, "nvmlDeviceGetCurrPcieLinkWidth");
  resolve(DeviceGetMaxPcieLinkGeneration, "nvmlDeviceGetMaxPcieLinkGeneration");
  resolve(DeviceGetMaxPcieLinkWidth, "nvmlDeviceGetMaxPcieLinkWidth");
  resolve(DeviceGetNvLinkState, "nvmlDeviceGetNvLinkState");
  resolve(DeviceGetFieldValues, "nvmlDeviceGetFieldValues");
  resolve(DeviceGetTotalEccErrors, "nvmlDeviceGetTotalEccErrors");
  resolve(EventSetCreate, "nvmlEventSetCreate");
  resolve(DeviceRegisterEvents, "nvmlDeviceRegisterEvents");
  resolve(EventSetWait_v2, "nvmlEventSetWait_v2");
  resolve(EventSetFree, "nvmlEventSetFree");
  if (Init_v2 == nullptr || DeviceGetCount_v2 == nullptr || DeviceGetHandleByIndex_v2 == nullptr) {
    *why = "libnvidia-ml.so.1 lacks nvmlInit_v2";
    close();
    return false;
  }
  const nvml::Return result = Init_v2();
  if (result != nvml::kSuccess) {
    *why = "nvmlInit failed: " + error_text(result);
    Shutdown = nullptr;
    close();
    return false;
  }
  return true;
}

void NvmlLibrary::close() {
  if (handle == nullptr) return;
  if (Shutdown != nullptr) Shutdown();
  dlclose(handle);
  *this = NvmlLibrary{};
}

std::string NvmlLibrary::error_text(nvml::Return result) const {
  const char* text = ErrorString != nullptr ? ErrorString(result) : nullptr;
  return text != nullptr ? text : "NVML error " + std::to_string(result);
}

}  // namespace proflaunch::launcher::gpu_metrics
