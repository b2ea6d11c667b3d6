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

}  // namespace
}  // namespace proflaunch::launcher::gpu_metrics
