// The record path of CUPTI PM sampling (preload/cuda/cupti/pm_sampling_records.h)
// with hand-built decoded samples: metric choice and units, values as
// records, times converted to CLOCK_MONOTONIC, nothing written twice.
#include "preload/cuda/cupti/pm_sampling_records.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "formats/records.h"

namespace proflaunch::cuda {
namespace {

class CollectingSink final : public WriterRecordSink {
 public:
  bool append(const void* record, uint16_t bytes) noexcept override {
    if (refuse) return false;
    format::GpuMetricSampleRecord sample{};
    EXPECT_EQ(bytes, sizeof sample);
    std::memcpy(&sample, record, sizeof sample);
    samples.push_back(sample);
    return true;
  }
  bool append_for_thread(uint32_t, const void* record, uint16_t bytes) noexcept override {
    return append(record, bytes);
  }
  std::vector<format::GpuMetricSampleRecord> samples;
  bool refuse = false;
};

TEST(PmSamplingRecords, DefaultIsTheDeviceLevelSetWithUnits) {
  const std::vector<PmMetric> metrics = choose_pm_metrics("DEFAULT");
  ASSERT_EQ(metrics.size(), 10u);
  EXPECT_TRUE(pm_metrics_are_default("default"));
  EXPECT_FALSE(pm_metrics_are_default("DEFAULTS"));
  std::vector<std::string> names;
  for (const PmMetric& m : metrics) {
    names.push_back(m.name);
    EXPECT_EQ(m.unit, m.cupti_name.find("pct") != std::string::npos ? "%" : "B/s") << m.cupti_name;
  }
  for (const char* wanted : {"sm_active", "sm_occupancy", "tensor_active", "gr_active", "dram_read", "dram_write",
                             "pcie_read", "pcie_write", "nvlink_read", "nvlink_write"})
    EXPECT_NE(std::find(names.begin(), names.end(), wanted), names.end()) << wanted;
  EXPECT_EQ(metrics[1].cupti_name, "sm__cycles_active.avg.pct_of_peak_sustained_elapsed");
}

TEST(PmSamplingRecords, AListNamesItsMetricsByTheirCuptiNames) {
  const std::vector<PmMetric> metrics =
      choose_pm_metrics("sm__cycles_active.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum.per_second,"
                        "smsp__inst_executed.sum");
  ASSERT_EQ(metrics.size(), 3u);
  EXPECT_EQ(metrics[0].name, metrics[0].cupti_name);
  EXPECT_EQ(metrics[0].unit, "%");
  EXPECT_EQ(metrics[1].unit, "B/s");
  EXPECT_EQ(metrics[2].unit, "");
  EXPECT_TRUE(choose_pm_metrics("").empty());
}

TEST(PmSamplingRecords, ValuesAreRoundedAndNeverNegative) {
  EXPECT_EQ(pm_record_value(37.4), 37u);
  EXPECT_EQ(pm_record_value(37.5), 38u);
  EXPECT_EQ(pm_record_value(-3.0), 0u);
  EXPECT_EQ(pm_record_value(std::nan("")), 0u);
  EXPECT_EQ(pm_record_value(2.5e9), 2'500'000'000u);
}

TEST(PmSamplingRecords, EachSampleBecomesOneRecordPerMetricAtItsStartOnTheTraceClock) {
  const std::vector<uint32_t> ids = {7, 9};
  std::vector<PmDecodedSample> samples = {
      {1'000'000'100'000, 1'000'000'200'000, {99.6, 1.0e9}},
      {1'000'000'200'000, 1'000'000'300'000, {0.2, 0.0}},
      {1'000'000'300'000, 1'000'000'400'000, {50.0}},  // fewer values than metrics: skipped
  };
  const int64_t offset = -999'000'000'000;  // CUPTI's clock to CLOCK_MONOTONIC
  CollectingSink sink;
  uint64_t last = 0;
  EXPECT_EQ(write_pm_samples(ids, samples, offset, 0, &last, sink), 4u);
  ASSERT_EQ(sink.samples.size(), 4u);
  EXPECT_EQ(sink.samples[0].header.kind, uint16_t(format::RecordKind::kGpuMetricSample));
  EXPECT_EQ(sink.samples[0].metric, 7u);
  EXPECT_EQ(sink.samples[0].time_ns, 1'000'100'000u);
  EXPECT_EQ(sink.samples[0].value, 100u);
  EXPECT_EQ(sink.samples[1].metric, 9u);
  EXPECT_EQ(sink.samples[1].value, 1'000'000'000u);
  EXPECT_EQ(sink.samples[2].time_ns, 1'000'200'000u);
  EXPECT_EQ(sink.samples[2].value, 0u);
  EXPECT_EQ(last, 1'000'200'000u);

  // A sample at or before the last one written (decoded again) is not written twice.
  CollectingSink again;
  samples.push_back({1'000'000'400'000, 1'000'000'500'000, {12.0, 3.0}});
  EXPECT_EQ(write_pm_samples(ids, samples, offset, last, &last, again), 2u);
  ASSERT_EQ(again.samples.size(), 2u);
  EXPECT_EQ(again.samples[0].time_ns, 1'000'400'000u);
  EXPECT_EQ(again.samples[0].value, 12u);
  EXPECT_EQ(last, 1'000'400'000u);

  // A full sink: nothing counted as written.
  CollectingSink full;
  full.refuse = true;
  EXPECT_EQ(write_pm_samples(ids, {{1'000'000'600'000, 1'000'000'700'000, {1.0, 2.0}}}, offset, 0, nullptr, full), 0u);
}

}  // namespace
}  // namespace proflaunch::cuda
