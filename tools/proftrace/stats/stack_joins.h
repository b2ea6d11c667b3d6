// What the stack sections (call-sites, alloc-sites, code) sum per call
// stack: the GPU time of the work each launch-point stack launched
// (kernels, copies, memsets, graph launches), and the bytes of each
// allocation with its memory-point stack. The interpretation pass has
// already paired each call with its stacks and joined each operation with
// its GPU work; these count what could not be attributed.
#pragma once

#include <cstdint>
#include <functional>
#include <tuple>

#include "tools/proftrace/interpret/events.h"

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

// The stacks of a call, when it has any taken at `point`.
inline bool stacks_at(const interpret::Stacks& stacks, format::StackPoint point) {
  return stacks.at(point) && !stacks.empty();
}
inline StackKey stack_key(const interpret::Section* section, const interpret::Stacks& stacks) {
  return StackKey{section->id, stacks.native, stacks.python};
}

// GPU time by launch-point stack: `add(stack, gpu_ns)` for each piece of
// GPU work whose operation has one.
class GpuTimeByStack : public interpret::Consumer {
 public:
  using Add = std::function<void(const StackKey&, uint64_t gpu_ns)>;
  explicit GpuTimeByStack(Add add) : add_(std::move(add)) {}

  void on_any_call(const interpret::Call& call) override {
    if (stacks_at(call.stacks, format::StackPoint::kLaunch)) ++stacks_;
  }
  void on_operation(const interpret::Operation& op, const interpret::GpuWork* gpu) override {
    if (gpu == nullptr || !stacks_at(op.stacks, format::StackPoint::kLaunch)) return;
    ++paired_;
    add_(stack_key(op.section, op.stacks), gpu->duration_ns());
  }
  // A graph launch's nodes after the first count for its stack too.
  void on_more_gpu_work(const interpret::Operation& op, const interpret::GpuWork& gpu) override {
    if (stacks_at(op.stacks, format::StackPoint::kLaunch)) add_(stack_key(op.section, op.stacks), gpu.duration_ns());
  }

  // Launch stacks without GPU time: GPU timing off, or lost; captured
  // work (it runs when its graph is launched); graph instantiations.
  uint64_t unmatched() const { return stacks_ - paired_; }

 private:
  Add add_;
  uint64_t stacks_ = 0;
  uint64_t paired_ = 0;
};

// What alloc-sites and code count as allocated: device, pool, managed,
// pinned or registered host and VMM physical memory; not address
// reservations or mappings, which would count the memory again.
bool allocates_memory(const format::MemoryOperationRecord& record);

// Bytes allocated by memory-point stack: `add(stack, bytes)` for each
// successful allocation that has one.
class BytesAllocatedByStack : public interpret::Consumer {
 public:
  using Add = std::function<void(const StackKey&, uint64_t bytes)>;
  explicit BytesAllocatedByStack(Add add) : add_(std::move(add)) {}

  void on_memory_operation(const interpret::Event<format::MemoryOperationRecord>& e) override {
    if (!allocates_memory(e.record)) return;
    if (e.record.span.flags & format::kApiCaptured) return;  // allocated when its graph runs
    if (e.record.span.flags & format::kApiCarried) return;   // allocated before the capture window
    if (stacks_at(e.stacks, format::StackPoint::kMemory)) add_(stack_key(e.section, e.stacks), e.record.bytes);
    else ++unmatched_;
  }

  // Allocations without a recorded stack.
  uint64_t unmatched() const { return unmatched_; }

 private:
  Add add_;
  uint64_t unmatched_ = 0;
};

}  // namespace proflaunch::tools::stats
