// CUDA_VISIBLE_DEVICES=2,0,7 on a machine of 3 devices (meson.build), and
// the devices' state the driver shares with other processes
// (simgpu_device_state.h) under SIMGPU_STATE_DIR.
#include <cuda.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "driver_test_support.h"
#include "simgpu_device_state.h"

namespace {

class VisibleDevices : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_CU_OK(cuInit(0)); }
};

TEST_F(VisibleDevices, TheListedDevicesAreRenumberedInOrderUntilAnInvalidEntry) {
  int count = 0;
  ASSERT_CU_OK(cuDeviceGetCount(&count));
  EXPECT_EQ(count, 2) << "2 and 0; 7 is no device and ends the list";
  // Identity stays the machine's: device 0 is the machine's device 2.
  CUuuid uuid;
  ASSERT_CU_OK(cuDeviceGetUuid_v2(&uuid, 0));
  EXPECT_EQ(uuid.bytes[12], 2);
  char bus[32];
  ASSERT_CU_OK(cuDeviceGetPCIBusId(bus, sizeof bus, 0));
  EXPECT_STREQ(bus, "0000:12:00.0");
  ASSERT_CU_OK(cuDeviceGetPCIBusId(bus, sizeof bus, 1));
  EXPECT_STREQ(bus, "0000:10:00.0");
  CUdevice device = -1;
  ASSERT_CU_OK(cuDeviceGetByPCIBusId(&device, "0000:10:00.0"));
  EXPECT_EQ(device, 1);
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetByPCIBusId(&device, "0000:11:00.0")) << "not visible";
}

TEST_F(VisibleDevices, MemoryHeldIsPublishedInTheMachineDevicesStateFile) {
  CUcontext context;
  ASSERT_CU_OK(cuDevicePrimaryCtxRetain(&context, 0));
  ASSERT_CU_OK(cuCtxSetCurrent(context));
  CUdeviceptr pointer = 0;
  ASSERT_CU_OK(cuMemAlloc(&pointer, 3 << 20));
  const std::string path = std::string(std::getenv("SIMGPU_STATE_DIR")) + "/gpu2";
  const int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0) << path;
  void* mapped = mmap(nullptr, sizeof(simgpu::DeviceStateFile), PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  ASSERT_NE(mapped, MAP_FAILED);
  const auto* file = static_cast<const simgpu::DeviceStateFile*>(mapped);
  uint64_t held = 0;
  for (const auto& slot : file->slots)
    if (slot.pid.load() == uint32_t(getpid())) held = slot.used_bytes.load();
  EXPECT_GE(held, uint64_t{3} << 20);
  EXPECT_EQ(file->total_bytes.load(), uint64_t{16384} << 20);
  ASSERT_CU_OK(cuMemFree(pointer));
  for (const auto& slot : file->slots)
    if (slot.pid.load() == uint32_t(getpid())) EXPECT_EQ(slot.used_bytes.load(), held - (uint64_t{3} << 20));
  munmap(mapped, sizeof(simgpu::DeviceStateFile));
}

}  // namespace
