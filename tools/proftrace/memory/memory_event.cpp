#include "tools/proftrace/memory/memory_event.h"

namespace proflaunch::tools::memory {

using namespace proflaunch::format;
using format::AllocationKind;
using format::MemoryAction;

namespace {

void set_span(MemoryEvent& event, const ApiSpan& span) {
  event.time_ns = span.end_ns;
  event.begin_ns = span.begin_ns;
  event.correlation_id = span.correlation_id;
  event.result = span.result;
  event.api = span.api;
}

}  // namespace

std::optional<MemoryEvent> memory_event(uint64_t section_id, uint32_t tid, const MemoryOperationRecord& r) {
  // Captured into a graph: nothing was allocated or freed by this call.
  if (r.span.flags & kApiCaptured) return std::nullopt;
  MemoryEvent event;
  event.section_id = section_id;
  event.tid = tid;
  event.device = r.device;
  event.address = r.address;
  event.bytes = r.bytes;
  event.stream = r.stream;
  event.handle = r.handle;
  event.pool_reserved_bytes = r.pool_reserved_bytes;
  event.flags = r.flags;
  event.kind = static_cast<AllocationKind>(r.kind);
  event.action = static_cast<MemoryAction>(r.action);
  set_span(event, r.span);
  return event;
}

MemoryEvent memory_event(uint64_t section_id, uint32_t tid, const MemoryInfoRecord& r) {
  MemoryEvent event;
  event.section_id = section_id;
  event.tid = tid;
  event.device = r.device;
  event.free_bytes = r.free_bytes;
  event.total_bytes = r.total_bytes;
  event.is_info = true;
  set_span(event, r.span);
  return event;
}

void GraphMemory::note_node(uint64_t section_id, const GraphNodeRecord& node) {
  Exec& exec = execs_[{section_id, node.graph_exec}];
  if (exec.instantiated) exec = Exec{};  // a handle reused by a new instantiation
  if (node.type == static_cast<uint8_t>(GraphNodeType::kMemAlloc) && node.bytes != 0)
    exec.blocks.push_back(Block{node.address, node.bytes, node.device});
}

std::vector<MemoryEvent> GraphMemory::launched(uint64_t section_id, uint32_t tid, const GraphLaunchRecord& launch,
                                               const interpret::Stacks& stacks) {
  std::vector<MemoryEvent> events;
  if (launch.span.result != 0 || (launch.span.flags & kApiCaptured)) return events;
  auto found = execs_.find({section_id, launch.graph_exec});
  if (found == execs_.end() || found->second.resident) return events;
  found->second.resident = true;
  for (const Block& block : found->second.blocks) {
    MemoryEvent event;
    event.section_id = section_id;
    event.tid = tid;
    event.time_ns = launch.span.end_ns;
    event.begin_ns = launch.span.begin_ns;
    event.correlation_id = launch.span.correlation_id;
    event.api = launch.span.api;
    event.address = block.address;
    event.bytes = block.bytes;
    event.device = block.device >= 0 ? block.device : launch.device;
    event.kind = AllocationKind::kDevice;
    event.action = MemoryAction::kAcquire;
    event.native_stack = stacks.native;
    event.python_stack = stacks.python;
    events.push_back(event);
  }
  return events;
}

std::vector<MemoryEvent> GraphMemory::destroyed(uint64_t section_id, uint32_t tid, const GraphExecRecord& exec_record) {
  std::vector<MemoryEvent> events;
  auto found = execs_.find({section_id, exec_record.graph_exec});
  if (found == execs_.end()) return events;
  if (exec_record.action == static_cast<uint8_t>(GraphExecAction::kInstantiate)) {
    found->second.instantiated = true;
    return events;
  }
  if (exec_record.action != static_cast<uint8_t>(GraphExecAction::kDestroy) || exec_record.span.result != 0)
    return events;
  if (found->second.resident) {
    for (const Block& block : found->second.blocks) {
      MemoryEvent event;
      event.section_id = section_id;
      event.tid = tid;
      event.time_ns = exec_record.span.end_ns;
      event.begin_ns = exec_record.span.begin_ns;
      event.correlation_id = exec_record.span.correlation_id;
      event.api = exec_record.span.api;
      event.address = block.address;
      event.device = block.device >= 0 ? block.device : exec_record.device;
      event.kind = AllocationKind::kDevice;
      event.action = MemoryAction::kRelease;
      events.push_back(event);
    }
  }
  execs_.erase(found);
  return events;
}

void MemoryEventFeed::on_memory_operation(const interpret::Event<MemoryOperationRecord>& e) {
  if (auto event = memory::memory_event(e.section->id, e.tid, e.record)) {
    event->native_stack = e.stacks.native;
    event->python_stack = e.stacks.python;
    memory_event(*event);
  }
}

void MemoryEventFeed::on_memory_info(const interpret::Event<MemoryInfoRecord>& e) {
  MemoryEvent event = memory::memory_event(e.section->id, e.tid, e.record);
  event.native_stack = e.stacks.native;
  event.python_stack = e.stacks.python;
  memory_event(event);
}

void MemoryEventFeed::on_graph_node(const interpret::Event<GraphNodeRecord>& e) {
  graphs_.note_node(e.section->id, e.record);
}

void MemoryEventFeed::on_graph_exec(const interpret::Event<GraphExecRecord>& e) {
  for (const MemoryEvent& event : graphs_.destroyed(e.section->id, e.tid, e.record)) memory_event(event);
}

void MemoryEventFeed::on_operation_read(const interpret::Operation& op) {
  if (op.kind != interpret::OperationKind::kGraphLaunch) return;
  for (const MemoryEvent& event : graphs_.launched(op.section->id, op.tid, op.graph_launch, op.stacks))
    memory_event(event);
}

}  // namespace proflaunch::tools::memory
