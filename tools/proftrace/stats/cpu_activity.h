// What the CPU was doing, for `stats --section cpu` and the gpu-idle-gap
// rule: each thread's CPU samples and blocking calls (interpret/events.h),
// kept until the end of the pass (a few numbers each: the GPU's idle gaps
// and the steps that filter them are known only then), the sampling state
// of each process, and the devices each thread put work on.
//
// Memory: 24 bytes per sample and 48 per blocking call (about 90 MB for an
// hour of one thread sampled at 1 kHz); the profiles are built from
// distinct stacks, symbolized once each.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tools/proftrace/interpret/events.h"
#include "tools/proftrace/interpret/trace_model.h"
#include "tools/proftrace/stats/gpu_idle_gaps.h"

namespace proflaunch::tools::stats {

class CpuActivity : public interpret::Consumer {
 public:
  using ThreadKey = std::pair<uint64_t, uint32_t>;  // (section, tid)
  struct Sample {
    uint64_t section;
    uint64_t time_ns;
    uint32_t tid;
    uint32_t native, python;
    // Sampling periods of CPU time it stands for (CpuSampleRecord::periods:
    // the kernel fires CPU-time timers at its tick, so one signal may stand
    // for several periods; at least 1).
    uint32_t periods;
  };
  struct Wait {
    uint64_t section;
    uint64_t begin_ns, end_ns;
    uint64_t object;
    uint32_t tid;
    uint32_t native, python;
    uint16_t api;
    uint8_t object_kind;
    uint64_t ns() const { return end_ns > begin_ns ? end_ns - begin_ns : 0; }
  };
  struct Sampling {
    format::CpuSamplingInfoRecord last{};  // the latest state
    bool seen = false;
    bool stepped_back = false, unavailable = false;
    uint64_t lost_unsafe = 0, lost_buffer_full = 0;
  };

  void on_cpu_sample(const interpret::CpuSampleEvent& e) override;
  void on_blocking_call(const interpret::BlockingCallEvent& e) override;
  void on_cpu_sampling_info(const interpret::Event<format::CpuSamplingInfoRecord>& e) override;
  void on_lost(const interpret::Event<format::LostRecord>& e) override;
  void on_operation_read(const interpret::Operation& op) override;

  // In the order read (each thread's in time order).
  const std::vector<Sample>& samples() const { return samples_; }
  const std::vector<Wait>& waits() const { return waits_; }
  const std::map<uint64_t, Sampling>& sampling() const { return sampling_; }
  bool empty() const { return samples_.empty() && waits_.empty() && sampling_.empty(); }

  // The CPU time one sample of `section` stands for: 1 s / its rate (1 ms
  // when no CpuSamplingInfo said).
  uint64_t period_ns(uint64_t section) const;

  // The devices a thread put work on; a thread that put none (a loader)
  // gets its process's.
  std::set<int32_t> devices(const ThreadKey& thread) const;
  // The thread of `section` that put the most work on a device (0: none).
  uint32_t launching_thread(uint64_t section) const;

 private:
  std::vector<Sample> samples_;
  std::vector<Wait> waits_;
  std::map<uint64_t, Sampling> sampling_;
  std::map<ThreadKey, std::set<int32_t>> thread_devices_;
  std::map<ThreadKey, uint64_t> launches_;
  std::map<uint64_t, std::set<int32_t>> section_devices_;
};

// Time intervals [begin, end), sorted and disjoint.
using Intervals = std::vector<std::pair<uint64_t, uint64_t>>;

// When each thread's GPU was idle: the gaps `gaps` found on each of the
// thread's devices (CpuActivity::devices), intersected when it has several.
class IdleTimes {
 public:
  IdleTimes(const GpuIdleGaps& gaps, const CpuActivity& activity);
  const Intervals& of(const CpuActivity::ThreadKey& thread);
  bool contains(const CpuActivity::ThreadKey& thread, uint64_t ns);
  uint64_t overlap(const CpuActivity::ThreadKey& thread, uint64_t begin_ns, uint64_t end_ns);

 private:
  const CpuActivity& activity_;
  std::map<std::pair<uint64_t, int32_t>, Intervals> by_device_;
  std::map<CpuActivity::ThreadKey, Intervals> by_thread_;
};

uint64_t overlap_ns(const Intervals& intervals, uint64_t begin_ns, uint64_t end_ns);

}  // namespace proflaunch::tools::stats
