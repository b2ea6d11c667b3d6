// The simulated ROCm SMI against the real rocm_smi.h (it is compiled with it),
// the launcher's own declarations (launcher/gpu_metrics/rocm_smi_library.h)
// checked against the same header, and what the library answers from the
// shared device state and its switches.
#include <gtest/gtest.h>
#include <rocm_smi/rocm_smi.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

#include "launcher/gpu_metrics/rocm_smi_library.h"
#include "simgpu_device_state.h"

namespace {

namespace launcher_rsmi = proflaunch::launcher::gpu_metrics::rsmi;

TEST(RocmSmiAbi, TheLaunchersDeclarationsMatchTheRealHeader) {
  static_assert(sizeof(launcher_rsmi::Frequencies) == sizeof(rsmi_frequencies_t));
  static_assert(offsetof(launcher_rsmi::Frequencies, frequency) == offsetof(rsmi_frequencies_t, frequency));
  static_assert(sizeof(launcher_rsmi::PcieBandwidth) == sizeof(rsmi_pcie_bandwidth_t));
  static_assert(offsetof(launcher_rsmi::PcieBandwidth, lanes) == offsetof(rsmi_pcie_bandwidth_t, lanes));
  static_assert(sizeof(launcher_rsmi::ErrorCount) == sizeof(rsmi_error_count_t));
  static_assert(sizeof(launcher_rsmi::GpuMetrics) == sizeof(rsmi_gpu_metrics_t));
  static_assert(offsetof(launcher_rsmi::GpuMetrics, throttle_status) == offsetof(rsmi_gpu_metrics_t, throttle_status));
  static_assert(sizeof(launcher_rsmi::Status) == sizeof(rsmi_status_t));
  static_assert(sizeof(rsmi_gpu_block_t) == sizeof(uint64_t), "passed as the launcher's uint64_t");
  static_assert(launcher_rsmi::kNotSupported == RSMI_STATUS_NOT_SUPPORTED);
  static_assert(launcher_rsmi::kPermission == RSMI_STATUS_PERMISSION);
  static_assert(launcher_rsmi::kInitError == RSMI_STATUS_INIT_ERROR);
  static_assert(launcher_rsmi::kMemTypeVram == RSMI_MEM_TYPE_VRAM);
  static_assert(launcher_rsmi::kClkTypeSys == RSMI_CLK_TYPE_SYS && launcher_rsmi::kClkTypeMem == RSMI_CLK_TYPE_MEM);
  static_assert(launcher_rsmi::kTempTypeEdge == RSMI_TEMP_TYPE_EDGE && launcher_rsmi::kTempCurrent == RSMI_TEMP_CURRENT);
  static_assert(launcher_rsmi::kGpuBlockUmc == RSMI_GPU_BLOCK_UMC);
  static_assert(launcher_rsmi::kMaxNumFrequencies == RSMI_MAX_NUM_FREQUENCIES);
  SUCCEED();
}

TEST(RocmSmiSim, DevicesIdsAndSwitches) {
  setenv("SIMGPU_DEVICE_COUNT", "3", 1);
  setenv("SIMGPU_ROCM_SMI_UNSUPPORTED", "rsmi_dev_power_ave_get@2", 1);
  setenv("SIMGPU_ROCM_SMI_PERMISSION", "rsmi_dev_power_cap_get", 1);
  setenv("SIMGPU_ROCM_SMI_PCIE_LINK", "1=gen3x8", 1);
  uint32_t count = 0;
  EXPECT_EQ(rsmi_num_monitor_devices(&count), RSMI_STATUS_INIT_ERROR) << "before rsmi_init";
  setenv("SIMGPU_ROCM_SMI_INIT_ERROR", "8", 1);
  EXPECT_EQ(rsmi_init(0), RSMI_STATUS_INIT_ERROR);
  unsetenv("SIMGPU_ROCM_SMI_INIT_ERROR");
  ASSERT_EQ(rsmi_init(0), RSMI_STATUS_SUCCESS);
  ASSERT_EQ(rsmi_num_monitor_devices(&count), RSMI_STATUS_SUCCESS);
  EXPECT_EQ(count, 3u);

  uint64_t id = 0;
  ASSERT_EQ(rsmi_dev_unique_id_get(1, &id), RSMI_STATUS_SUCCESS);
  EXPECT_EQ(id, simgpu::amd_unique_id(1));
  EXPECT_EQ(id, 0x53494d414d440001ull) << "\"SIMAMD\" and the index";
  char name[64];
  ASSERT_EQ(rsmi_dev_name_get(0, name, sizeof name), RSMI_STATUS_SUCCESS);
  EXPECT_STREQ(name, "AMD Instinct MI210 (simulated)");
  uint64_t bdfid = 0;
  ASSERT_EQ(rsmi_dev_pci_id_get(1, &bdfid), RSMI_STATUS_SUCCESS);
  EXPECT_EQ((bdfid >> 8) & 0xff, 2u);

  uint64_t power = 0;
  EXPECT_EQ(rsmi_dev_power_ave_get(2, 0, &power), RSMI_STATUS_NOT_SUPPORTED);
  ASSERT_EQ(rsmi_dev_power_ave_get(0, 0, &power), RSMI_STATUS_SUCCESS);
  EXPECT_EQ(power, 42'000'000u) << "microwatts, idle";
  EXPECT_EQ(rsmi_dev_power_cap_get(0, 0, &power), RSMI_STATUS_PERMISSION);
  const char* text = nullptr;
  ASSERT_EQ(rsmi_status_string(RSMI_STATUS_NOT_SUPPORTED, &text), RSMI_STATUS_SUCCESS);
  EXPECT_EQ(std::string(text).rfind("RSMI_STATUS_NOT_SUPPORTED", 0), 0u);

  // Nothing ran: idle, the clock at its lowest level.
  uint32_t busy = 99;
  ASSERT_EQ(rsmi_dev_busy_percent_get(0, &busy), RSMI_STATUS_SUCCESS);
  EXPECT_EQ(busy, 0u);
  rsmi_frequencies_t clocks;
  ASSERT_EQ(rsmi_dev_gpu_clk_freq_get(0, RSMI_CLK_TYPE_SYS, &clocks), RSMI_STATUS_SUCCESS);
  EXPECT_EQ(clocks.current, 0u);
  EXPECT_EQ(clocks.frequency[clocks.num_supported - 1], 1700'000'000u) << "Hz";
  EXPECT_EQ(rsmi_dev_gpu_clk_freq_get(0, RSMI_CLK_TYPE_DF, &clocks), RSMI_STATUS_NOT_SUPPORTED);
  int64_t temperature = 0;
  ASSERT_EQ(rsmi_dev_temp_metric_get(0, RSMI_TEMP_TYPE_EDGE, RSMI_TEMP_CURRENT, &temperature), RSMI_STATUS_SUCCESS);
  EXPECT_EQ(temperature, 35'000) << "millidegrees C";

  rsmi_pcie_bandwidth_t link;
  ASSERT_EQ(rsmi_dev_pci_bandwidth_get(1, &link), RSMI_STATUS_SUCCESS);
  EXPECT_EQ(link.transfer_rate.frequency[link.transfer_rate.current], 8'000'000'000u) << "gen 3: 8 GT/s";
  EXPECT_EQ(link.lanes[link.transfer_rate.current], 8u);

  uint64_t total = 0, used = 1;
  ASSERT_EQ(rsmi_dev_memory_total_get(0, RSMI_MEM_TYPE_VRAM, &total), RSMI_STATUS_SUCCESS);
  EXPECT_EQ(total, 16384ull << 20);
  ASSERT_EQ(rsmi_dev_memory_usage_get(0, RSMI_MEM_TYPE_VRAM, &used), RSMI_STATUS_SUCCESS);
  EXPECT_EQ(used, 0u);
  rsmi_error_count_t errors{1, 1};
  ASSERT_EQ(rsmi_dev_ecc_count_get(0, RSMI_GPU_BLOCK_UMC, &errors), RSMI_STATUS_SUCCESS);
  EXPECT_EQ(errors.uncorrectable_err, 0u);
  rsmi_gpu_metrics_t metrics;
  ASSERT_EQ(rsmi_dev_gpu_metrics_info_get(0, &metrics), RSMI_STATUS_SUCCESS);
  EXPECT_EQ(metrics.common_header.structure_size, sizeof metrics);
  EXPECT_EQ(metrics.throttle_status, 0u);
  EXPECT_EQ(rsmi_shut_down(), RSMI_STATUS_SUCCESS);
}

// What a process's work shows, through the state file as the simulated HIP
// runtime of another process would write it.
TEST(RocmSmiSim, BusyIsTheInstantMemoryThePublishedBytes) {
  setenv("SIMGPU_DEVICE_COUNT", "3", 1);
  ASSERT_EQ(rsmi_init(0), RSMI_STATUS_SUCCESS);
  // Device 0's file: where the simulator put it (same SIMGPU_STATE_DIR).
  const std::string path = std::string(std::getenv("SIMGPU_STATE_DIR")) + "/amdgpu0";
  FILE* probe = std::fopen(path.c_str(), "r");
  ASSERT_NE(probe, nullptr) << path << ": the AMD devices' own file";
  std::fclose(probe);
  // A second mapping of it, as a writer.
  simgpu::DeviceStateFile* file = nullptr;
  {
    const int fd = open(path.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    file = static_cast<simgpu::DeviceStateFile*>(
        mmap(nullptr, sizeof(simgpu::DeviceStateFile), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    close(fd);
  }
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch()).count();
  file->kernels.add(now, now + 2'000'000'000);  // a kernel running for the next 2 s
  file->slots[0].used_bytes.store(123 << 20);
  file->slots[0].pid.store(uint32_t(getpid()));
  uint32_t busy = 0;
  ASSERT_EQ(rsmi_dev_busy_percent_get(0, &busy), RSMI_STATUS_SUCCESS);
  EXPECT_EQ(busy, 100u);
  ASSERT_EQ(rsmi_dev_busy_percent_get(1, &busy), RSMI_STATUS_SUCCESS);
  EXPECT_EQ(busy, 0u) << "another device";
  uint64_t used = 0;
  ASSERT_EQ(rsmi_dev_memory_usage_get(0, RSMI_MEM_TYPE_VRAM, &used), RSMI_STATUS_SUCCESS);
  EXPECT_EQ(used, 123ull << 20);
  // Another device holds nothing.
  ASSERT_EQ(rsmi_dev_memory_usage_get(1, RSMI_MEM_TYPE_VRAM, &used), RSMI_STATUS_SUCCESS);
  EXPECT_EQ(used, 0u);
  file->slots[0].pid.store(0);
  EXPECT_EQ(rsmi_shut_down(), RSMI_STATUS_SUCCESS);
}

}  // namespace
