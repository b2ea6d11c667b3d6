// The simulated NVML's layouts against the real nvml.h (sizes and offsets as
// the bindings generated from it have them: nvml-wrapper-sys 0.7.0), and what
// it answers from the shared device state.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../nvml_api.h"

namespace {

TEST(NvmlAbi, LayoutsMatchTheRealHeader) {
  EXPECT_EQ(sizeof(nvmlPciInfo_t), 68u);
  EXPECT_EQ(offsetof(nvmlPciInfo_t, domain), 16u);
  EXPECT_EQ(offsetof(nvmlPciInfo_t, busId), 36u);
  EXPECT_EQ(sizeof(nvmlMemory_t), 24u);
  EXPECT_EQ(sizeof(nvmlUtilization_t), 8u);
  EXPECT_EQ(sizeof(nvmlFieldValue_t), 40u);
  EXPECT_EQ(offsetof(nvmlFieldValue_t, valueType), 24u);
  EXPECT_EQ(offsetof(nvmlFieldValue_t, value), 32u);
  EXPECT_EQ(sizeof(nvmlEventData_t), 32u);
  EXPECT_EQ(NVML_ERROR_NOT_SUPPORTED, 3);
  EXPECT_EQ(NVML_ERROR_TIMEOUT, 10);
  EXPECT_EQ(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, 138);
}

TEST(NvmlSim, DevicesNamesAndSwitches) {
  setenv("SIMGPU_DEVICE_COUNT", "3", 1);
  setenv("SIMGPU_NVML_THROTTLE", "1=power", 1);
  setenv("SIMGPU_NVML_UNSUPPORTED", "nvmlDeviceGetPowerUsage@2", 1);
  setenv("SIMGPU_NVML_PCIE_LINK", "2=gen3x8", 1);
  EXPECT_EQ(nvmlDeviceGetCount_v2(nullptr), NVML_ERROR_UNINITIALIZED);
  ASSERT_EQ(nvmlInit_v2(), NVML_SUCCESS);
  unsigned count = 0;
  ASSERT_EQ(nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
  EXPECT_EQ(count, 3u);
  nvmlDevice_t devices[3];
  for (unsigned i = 0; i < 3; ++i) ASSERT_EQ(nvmlDeviceGetHandleByIndex_v2(i, &devices[i]), NVML_SUCCESS);

  char uuid[NVML_DEVICE_UUID_BUFFER_SIZE];
  ASSERT_EQ(nvmlDeviceGetUUID(devices[1], uuid, sizeof uuid), NVML_SUCCESS);
  // The simulated driver's cuDeviceGetUuid bytes: "SIMGPU-sim-\0" then the index.
  EXPECT_STREQ(uuid, "GPU-53494d47-5055-2d73-696d-2d0001000000");
  nvmlPciInfo_t pci;
  ASSERT_EQ(nvmlDeviceGetPciInfo_v3(devices[1], &pci), NVML_SUCCESS);
  EXPECT_STREQ(pci.busId, "00000000:11:00.0");

  unsigned power = 0;
  EXPECT_EQ(nvmlDeviceGetPowerUsage(devices[2], &power), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(nvmlDeviceGetPowerUsage(devices[0], &power), NVML_SUCCESS);
  EXPECT_STREQ(nvmlErrorString(NVML_ERROR_NOT_SUPPORTED), "Not Supported");
  unsigned gen = 0, width = 0;
  ASSERT_EQ(nvmlDeviceGetCurrPcieLinkGeneration(devices[2], &gen), NVML_SUCCESS);
  ASSERT_EQ(nvmlDeviceGetCurrPcieLinkWidth(devices[2], &width), NVML_SUCCESS);
  EXPECT_EQ(gen, 3u);
  EXPECT_EQ(width, 8u);
  nvmlEnableState_t active;
  EXPECT_EQ(nvmlDeviceGetNvLinkState(devices[0], 0, &active), NVML_ERROR_NOT_SUPPORTED);

  // Nothing ran: idle, the clocks down for that reason.
  nvmlUtilization_t rates;
  ASSERT_EQ(nvmlDeviceGetUtilizationRates(devices[1], &rates), NVML_SUCCESS);
  EXPECT_EQ(rates.gpu, 0u);
  unsigned long long reasons = 0;
  ASSERT_EQ(nvmlDeviceGetCurrentClocksThrottleReasons(devices[1], &reasons), NVML_SUCCESS);
  EXPECT_EQ(reasons, static_cast<unsigned long long>(nvmlClocksThrottleReasonGpuIdle));

  nvmlMemory_t memory;
  ASSERT_EQ(nvmlDeviceGetMemoryInfo(devices[0], &memory), NVML_SUCCESS);
  EXPECT_EQ(memory.total, 16384ull << 20);
  EXPECT_EQ(memory.used + memory.free, memory.total);
  EXPECT_EQ(nvmlShutdown(), NVML_SUCCESS);
}

}  // namespace
