// One memory record (MemoryOperation or MemoryInfo) as the memory model
// reads it: the fields it needs, unpacked, with its section and thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "formats/reader.h"
#include "formats/records.h"

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

// The event of a memory record, or nullopt for any other record kind.
std::optional<MemoryEvent> decode_memory_event(const format::RecordView& record);

// Memory of CUDA graphs (stream-ordered allocations captured into a graph,
// memory nodes). The calls that were captured allocate nothing
// (decode_memory_event leaves them out); the graph's memory is what its
// mem-alloc nodes (GraphNode records at instantiation) say. It is taken when
// the executable graph is first launched and given back when it is
// destroyed: a graph's pool keeps it between launches (the memory a graph
// frees inside itself is reused by its next launch, not returned).
class GraphMemory {
 public:
  // Every record in order; `emit` receives the events it implies.
  template <typename Emit>
  void observe(const format::RecordView& record, Emit&& emit) {
    switch (record.record_kind()) {
      case format::RecordKind::kGraphNode: note_node(record); break;
      case format::RecordKind::kGraphLaunch:
        for (const MemoryEvent& event : launched(record)) emit(event);
        break;
      case format::RecordKind::kGraphExec:
        for (const MemoryEvent& event : destroyed(record)) emit(event);
        break;
      default: break;
    }
  }

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
  void note_node(const format::RecordView& record);
  std::vector<MemoryEvent> launched(const format::RecordView& record);
  std::vector<MemoryEvent> destroyed(const format::RecordView& record);
  std::map<std::pair<uint64_t, uint64_t>, Exec> execs_;  // (section, graph exec)
};

}  // namespace proflaunch::tools::memory
