// Which of NVML's devices CUDA_VISIBLE_DEVICES leaves to the program
// (launcher/gpu_metrics/sampler.h), in the program's order.
#include <gtest/gtest.h>

#include "launcher/gpu_metrics/sampler.h"

namespace proflaunch::launcher::gpu_metrics {
namespace {

const std::vector<std::string> kUuids = {"GPU-aaaa1111-0000-0000-0000-000000000000",
                                         "GPU-bbbb2222-0000-0000-0000-000000000000",
                                         "GPU-bbbb3333-0000-0000-0000-000000000000"};

TEST(VisibleDevices, UnsetMeansEveryDevice) {
  EXPECT_EQ(visible_devices(nullptr, kUuids), (std::vector<int>{0, 1, 2}));
}

TEST(VisibleDevices, IndicesInTheProgramsOrder) {
  EXPECT_EQ(visible_devices("2,0", kUuids), (std::vector<int>{2, 0}));
  EXPECT_EQ(visible_devices("1", kUuids), (std::vector<int>{1}));
}

TEST(VisibleDevices, TheListEndsAtTheFirstEntryThatMatchesNothing) {
  EXPECT_EQ(visible_devices("1,7,0", kUuids), (std::vector<int>{1}));
  EXPECT_EQ(visible_devices("0,0,1", kUuids), (std::vector<int>{0})) << "a repeated device ends it too";
  EXPECT_TRUE(visible_devices("", kUuids).empty());
  EXPECT_TRUE(visible_devices("-1", kUuids).empty());
}

TEST(VisibleDevices, UuidsWholeOrAUniquePrefix) {
  EXPECT_EQ(visible_devices("GPU-bbbb3333-0000-0000-0000-000000000000,GPU-aaaa", kUuids), (std::vector<int>{2, 0}));
  EXPECT_TRUE(visible_devices("GPU-bbbb", kUuids).empty()) << "ambiguous: two devices start so";
}

// AMD: ROCR_VISIBLE_DEVICES first, then HIP_VISIBLE_DEVICES (else
// CUDA_VISIBLE_DEVICES) on what it left; UUIDs as ROCr writes them.
const std::vector<std::string> kAmdUuids = {"GPU-53494d414d440000", "GPU-53494d414d440001",
                                            "GPU-53494d414d440002", "GPU-53494d414d440003"};

std::vector<int> amd(const char* rocr, const char* hip, const char* cuda = nullptr) {
  AmdVisibility visibility;
  visibility.rocr_visible_devices = rocr;
  visibility.hip_visible_devices = hip;
  visibility.cuda_visible_devices = cuda;
  return amd_visible_devices(visibility, kAmdUuids);
}

TEST(AmdVisibleDevices, UnsetMeansEveryDevice) { EXPECT_EQ(amd(nullptr, nullptr), (std::vector<int>{0, 1, 2, 3})); }

TEST(AmdVisibleDevices, HipIndicesApplyToWhatRocrLeft) {
  EXPECT_EQ(amd(nullptr, "2,0"), (std::vector<int>{2, 0}));
  EXPECT_EQ(amd("1,3", nullptr), (std::vector<int>{1, 3}));
  EXPECT_EQ(amd("1,3", "1"), (std::vector<int>{3})) << "HIP's 1 is the second device ROCr left";
  EXPECT_TRUE(amd("1,3", "2").empty()) << "ROCr left two";
}

TEST(AmdVisibleDevices, CudaVisibleDevicesOnlyWhenHipsIsUnset) {
  EXPECT_EQ(amd(nullptr, nullptr, "3"), (std::vector<int>{3}));
  EXPECT_EQ(amd(nullptr, "1", "3"), (std::vector<int>{1}));
}

TEST(AmdVisibleDevices, UuidsAndTheEndOfTheList) {
  EXPECT_EQ(amd("GPU-53494d414d440002,0", nullptr), (std::vector<int>{2, 0}));
  EXPECT_EQ(amd(nullptr, "GPU-53494d414d440003"), (std::vector<int>{3}));
  EXPECT_EQ(amd("2,9,1", nullptr), (std::vector<int>{2})) << "ends at the first entry that matches nothing";
  EXPECT_EQ(amd("2,2", nullptr), (std::vector<int>{2})) << "a repeated device ends it too";
}

}  // namespace
}  // namespace proflaunch::launcher::gpu_metrics
