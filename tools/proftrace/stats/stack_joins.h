// The joins the stack sections (call-sites, alloc-sites, code) share: a
// CallStack names an operation's stacks by its correlation id, and the
// operation's GpuActivity (for GPU time) or MemoryOperation (for bytes) is
// found by the same id. Either side of the GPU join may come first, so each
// waits in a bounded FIFO window; memory grows with the window, never with
// the number of operations.
#pragma once

#include <cstdint>
#include <deque>
#include <tuple>
#include <unordered_map>

#include "formats/reader.h"
#include "tools/proftrace/stats/gpu_time_join.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools::stats {

// A call's stacks: what the stack sections sum by.
struct StackKey {
  uint64_t section = 0;
  uint32_t native = 0;
  uint32_t python = 0;
  bool operator<(const StackKey& other) const {
    return std::tie(section, native, python) < std::tie(other.section, other.native, other.python);
  }
};

struct Correlation {
  uint64_t section;
  uint64_t id;
  bool operator==(const Correlation& other) const { return section == other.section && id == other.id; }
};
struct CorrelationHash {
  size_t operator()(const Correlation& c) const { return std::hash<uint64_t>()(c.section * 31 + c.id); }
};

// Launch-point stacks (kernel launches, copies, memsets) with their GPU time:
// GpuTimeJoin with the stacks as its operations.
class GpuTimeByStackJoin {
 public:
  GpuTimeByStackJoin();
  GpuTimeByStackJoin(const GpuTimeByStackJoin&) = delete;  // the join's callback holds `this`
  GpuTimeByStackJoin& operator=(const GpuTimeByStackJoin&) = delete;

  // True when `record` completes a pair: then `key` is its stacks and
  // `gpu_ns` the GPU duration.
  bool on_record(const SectionModel& section, const format::RecordView& record, StackKey* key, uint64_t* gpu_ns);
  // Stacks still waiting or dropped from the window without GPU time (GPU
  // timing off, or lost), plus activities dropped without a stack.
  uint64_t unmatched() const { return stacks_added_ - paired_count_ + join_.activities_without_operation(); }

 private:
  GpuTimeJoin<StackKey> join_;
  bool paired_ = false;  // by the record on_record is handling
  StackKey paired_key_;
  uint64_t paired_ns_ = 0;
  uint64_t stacks_added_ = 0;
  uint64_t paired_count_ = 0;
};

// Successful allocations with the memory-point stack that follows each.
class BytesAllocatedByStackJoin {
 public:
  bool on_record(const SectionModel& section, const format::RecordView& record, StackKey* key, uint64_t* bytes);
  // Allocations without a recorded stack.
  uint64_t unmatched() const { return bytes_.size() + unmatched_; }

 private:
  std::unordered_map<Correlation, uint64_t, CorrelationHash> bytes_;
  std::deque<Correlation> order_;  // may name allocations already matched
  uint64_t unmatched_ = 0;
};

// What alloc-sites and code count as allocated: device, pool, managed,
// pinned or registered host and VMM physical memory; not address
// reservations or mappings, which would count the memory again.
bool allocates_memory(const format::MemoryOperationRecord& record);

}  // namespace proflaunch::tools::stats
