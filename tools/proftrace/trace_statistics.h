// Counts for `proftrace info`: records by kind, time span, LOST totals, per
// section. One full pass; memory grows with sections and kinds, not events.
#pragma once

#include <array>
#include <cstdint>
#include <map>

#include "formats/reader.h"

namespace proflaunch::tools {

struct SectionStatistics {
  uint64_t event_records = 0;
  uint64_t counted_calls = 0;  // the calls ApiCount records count (not records of their own)
  uint64_t lost_records = 0;  // sum of LOST counts
  uint64_t lost_record_count = 0;  // LOST records (of a loss)
  // GPU work of calls outside every capture window, dropped on purpose
  // (LostReason::kOutsideCaptureWindow): not in lost_records.
  uint64_t outside_window_work = 0;
  std::map<uint32_t, uint64_t> lost_by_reason;
  uint64_t cpu_samples = 0;         // CpuSample records
  uint64_t cpu_sample_periods = 0;  // the sampling periods they stand for
  uint64_t cpu_samples_lost = 0;    // LOST with reason CPU sample unsafe / buffer full
  bool has_cpu_sampling_info = false;
  uint32_t cpu_sampling_hz = 0;
  uint8_t cpu_sampling_state = 0;
  uint8_t cpu_sampling_signal = 0;
  uint64_t first_ns = UINT64_MAX;
  uint64_t last_ns = 0;
};

class StatisticsCollector : public format::RecordVisitor {
 public:
  void on_record(const format::RecordView& record) override;

  uint64_t count(uint16_t kind) const;
  const std::map<uint16_t, uint64_t>& unusual_kinds() const { return other_kinds_; }
  const std::map<uint64_t, SectionStatistics>& sections() const { return sections_; }
  uint64_t first_ns() const { return first_ns_; }
  uint64_t last_ns() const { return last_ns_; }
  bool has_time_span() const { return first_ns_ <= last_ns_; }

 private:
  void see_time(SectionStatistics& section, uint64_t ns);

  std::array<uint64_t, 256> counts_{};  // every kind of v1 is below 256
  std::map<uint16_t, uint64_t> other_kinds_;
  std::map<uint64_t, SectionStatistics> sections_;
  uint64_t first_ns_ = UINT64_MAX;
  uint64_t last_ns_ = 0;
  uint64_t last_section_id_ = 0;
  SectionStatistics* last_section_ = nullptr;
};

}  // namespace proflaunch::tools
