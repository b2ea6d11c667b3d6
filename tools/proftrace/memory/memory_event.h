// One memory record (MemoryOperation or MemoryInfo) as the memory model
// reads it: the fields it needs, unpacked, with its section and thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "formats/records.h"
#include "tools/proftrace/interpret/events.h"

namespace proflaunch::tools::memory {

struct MemoryEvent {
  uint64_t section_id = 0;
  uint64_t time_ns = 0;   // when the call returned: its effect is complete
  uint64_t begin_ns = 0;
  uint64_t correlation_id = 0;
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint64_t stream = 0;
  uint64_t handle = 0;
  uint64_t pool_reserved_bytes = format::kPoolReservedUnknown;
  uint64_t free_bytes = 0;   // MemoryInfo
  uint64_t total_bytes = 0;  // MemoryInfo
  uint64_t arrival = 0;      // position in the pass: orders events with equal times
  uint32_t native_stack = 0;  // the call's stacks (CallStack ids of its section), 0 when none
  uint32_t python_stack = 0;
  int32_t device = -1;
  int32_t result = 0;
  uint32_t tid = 0;
  uint32_t flags = 0;
  uint16_t api = 0;
  format::AllocationKind kind = format::AllocationKind::kDevice;
  format::MemoryAction action = format::MemoryAction::kAcquire;
  bool is_info = false;  // a MemoryInfo record (cuMemGetInfo)

  bool succeeded() const { return result == 0; }
};

// The event of a memory call (nullopt when it was captured into a graph:
// then it allocated or freed nothing), and of a cuMemGetInfo.
std::optional<MemoryEvent> memory_event(uint64_t section_id, uint32_t tid, const format::MemoryOperationRecord& record);
MemoryEvent memory_event(uint64_t section_id, uint32_t tid, const format::MemoryInfoRecord& record);

// Memory of CUDA graphs (stream-ordered allocations captured into a graph,
// memory nodes). The calls that were captured allocate nothing
// (memory_event leaves them out); the graph's memory is what its mem-alloc
// nodes (GraphNode records at instantiation) say. It is taken when the
// executable graph is first launched and given back when it is destroyed: a
// graph's pool keeps it between launches (the memory a graph frees inside
// itself is reused by its next launch, not returned).
class GraphMemory {
 public:
  void note_node(uint64_t section_id, const format::GraphNodeRecord& node);
  // The graph's memory at its first launch, with the launch's stacks.
  std::vector<MemoryEvent> launched(uint64_t section_id, uint32_t tid, const format::GraphLaunchRecord& launch,
                                    const interpret::Stacks& stacks);
  std::vector<MemoryEvent> destroyed(uint64_t section_id, uint32_t tid, const format::GraphExecRecord& exec);

 private:
  struct Block {
    uint64_t address;
    uint64_t bytes;
    int32_t device;
  };
  struct Exec {
    std::vector<Block> blocks;
    bool resident = false;
    bool instantiated = false;
  };
  std::map<std::pair<uint64_t, uint64_t>, Exec> execs_;  // (section, graph exec)
};

// The memory events of the interpretation pass, in the order they come:
// memory calls, cuMemGetInfo, and a graph's memory at its first launch and
// its destruction. A subclass takes each in memory_event(); LOST counts add
// up in lost_records().
class MemoryEventFeed : public interpret::Consumer {
 public:
  void on_memory_operation(const interpret::Event<format::MemoryOperationRecord>& e) override;
  void on_memory_info(const interpret::Event<format::MemoryInfoRecord>& e) override;
  void on_graph_node(const interpret::Event<format::GraphNodeRecord>& e) override;
  void on_graph_exec(const interpret::Event<format::GraphExecRecord>& e) override;
  void on_operation_read(const interpret::Operation& op) override;
  void on_lost(const interpret::Event<format::LostRecord>& e) override { lost_records_ += e.record.count; }

  uint64_t lost_records() const { return lost_records_; }

 protected:
  virtual void memory_event(const MemoryEvent& event) = 0;

 private:
  GraphMemory graphs_;
  uint64_t lost_records_ = 0;
};

}  // namespace proflaunch::tools::memory
