#include "tools/proftrace/record_text.h"
#include "tools/proftrace/memory/perfetto_counters.h"

#include <string>

#include "tools/proftrace/memory/memory_event.h"

namespace proflaunch::tools::memory {

void PerfettoMemoryCounters::on_record(const format::RecordView& record) {
  graphs_.observe(record, [this](const MemoryEvent& event) {
    order_.push(event, [this](const MemoryEvent& ready) { state_.apply(ready); });
  });
  const auto kind = record.record_kind();
  if (kind != format::RecordKind::kMemoryOperation && kind != format::RecordKind::kMemoryInfo) return;
  if (auto event = decode_memory_event(record))
    order_.push(*event, [this](const MemoryEvent& ready) { state_.apply(ready); });
}

void PerfettoMemoryCounters::finish() {
  order_.finish([this](const MemoryEvent& ready) { state_.apply(ready); });
}

void PerfettoMemoryCounters::on_event(const MemoryEvent& event, const SpaceKey& space, const SpaceTotals& totals) {
  Written& last = written_[space];
  const bool host = space.device == kHostSpace;
  if (host ? totals.pinned() == last.pinned
           : totals.allocated() == last.allocated && totals.reserved() == last.reserved &&
                 totals.managed_bytes == last.managed)
    return;
  perfetto_json::SectionContext& section = layout_.section(space.section_id);
  JsonWriter& w = out_.next_event();
  w.raw("{\"ph\":\"C\",\"name\":");
  w.quoted(host ? std::string("Host memory")
                : space.device >= 0 ? device_label(space.device) + " memory" : std::string("GPU ? memory"));
  w.raw(",\"pid\":");
  w.number(section.pid);
  w.raw(",\"tid\":");
  w.number(section.pid);
  w.raw(",\"ts\":");
  w.microseconds(layout_.timeline_ns(section, event.time_ns));
  if (host) {
    w.raw(",\"args\":{\"pinned\":");
    w.number(totals.pinned());
    last.pinned = totals.pinned();
  } else {
    w.raw(",\"args\":{\"allocated\":");
    w.number(totals.allocated());
    w.raw(",\"reserved\":");
    w.number(totals.reserved());
    // Managed memory gets its track once the process uses any.
    last.any_managed = last.any_managed || totals.managed_bytes > 0;
    if (last.any_managed) {
      w.raw(",\"managed\":");
      w.number(totals.managed_bytes);
    }
    last.allocated = totals.allocated();
    last.reserved = totals.reserved();
    last.managed = totals.managed_bytes;
  }
  w.raw("}}");
  ++counter_events_;
}

}  // namespace proflaunch::tools::memory
