// The call stacks of the allocations a memory report lists: a second pass
// over the events that keeps only their CallStack records, formatted root
// first.
#include <map>
#include <optional>
#include <set>

#include "tools/proftrace/memory/memory_analysis.h"
#include "tools/proftrace/stacks/stack_formatter.h"

namespace proflaunch::tools::memory {

void attach_call_stacks(std::vector<InputTrace>& inputs, const TraceModel& model, MemoryReport& report) {
  const std::map<uint64_t, std::set<uint64_t>> wanted = listed_correlations(report);
  bool any_stacks = false;
  for (const auto& [id, section] : model.sections()) any_stacks |= !section.stacks.empty() && wanted.count(id) > 0;
  if (!any_stacks) return;
  struct Found {
    uint32_t native, python;
  };
  std::map<std::pair<uint64_t, uint64_t>, Found> found;
  struct Visitor : format::RecordVisitor {
    const std::map<uint64_t, std::set<uint64_t>>* wanted;
    std::map<std::pair<uint64_t, uint64_t>, Found>* found;
    void on_record(const format::RecordView& record) override {
      if (record.record_kind() != format::RecordKind::kCallStack) return;
      const auto stack = record.as<format::CallStackRecord>();
      const auto section = wanted->find(record.section_id);
      if (section == wanted->end() || section->second.count(stack.correlation_id) == 0) return;
      (*found)[{record.section_id, stack.correlation_id}] = Found{stack.native_stack, stack.python_stack};
    }
  } visitor;
  visitor.wanted = &wanted;
  visitor.found = &found;
  for (auto& input : inputs) input.reader->read(visitor, format::ChunkSelection::kEventsOnly);
  StackFormatter formatter;
  attach_stacks(report, [&](uint64_t section_id, uint64_t correlation) -> std::optional<std::string> {
    const auto it = found.find({section_id, correlation});
    const SectionModel* section = model.find(section_id);
    if (it == found.end() || section == nullptr) return std::nullopt;
    std::string text = formatter.text(*section, it->second.native, it->second.python);
    if (text.empty()) return std::nullopt;
    return text;
  });
}

}  // namespace proflaunch::tools::memory
