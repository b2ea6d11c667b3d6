#include "tools/proftrace/timeline/memory_counters.h"

#include "tools/proftrace/record_text.h"

#include <string>

#include "tools/proftrace/memory/memory_event.h"

namespace proflaunch::tools::timeline {

using memory::MemoryEvent;
using memory::SpaceKey;
using memory::SpaceTotals;

void MemoryCounters::memory_event(const MemoryEvent& event) {
  order_.push(event, [this](const MemoryEvent& ready) { state_.apply(ready); });
}

void MemoryCounters::finish() {
  order_.finish([this](const MemoryEvent& ready) { state_.apply(ready); });
}

void MemoryCounters::on_event(const MemoryEvent& event, const SpaceKey& space, const SpaceTotals& totals) {
  Written& last = written_[space];
  const bool host = space.device == memory::kHostSpace;
  if (host ? totals.pinned() == last.pinned
           : totals.allocated() == last.allocated && totals.reserved() == last.reserved &&
                 totals.managed_bytes == last.managed)
    return;
  SectionContext& section = layout_.section(space.section_id);
  CounterSample::Value values[3];
  size_t count = 0;
  Str name;
  if (host) {
    name = layout_.strings().intern("Host memory");
    values[count++] = {"pinned", totals.pinned()};
    last.pinned = totals.pinned();
  } else {
    name = layout_.strings().intern(space.device >= 0 ? device_label(space.device) + " memory"
                                                      : std::string("GPU ? memory"));
    values[count++] = {"allocated", totals.allocated()};
    values[count++] = {"reserved", totals.reserved()};
    // Managed memory gets its counter once the process uses any.
    last.any_managed = last.any_managed || totals.managed_bytes > 0;
    if (last.any_managed) values[count++] = {"managed", totals.managed_bytes};
    last.allocated = totals.allocated();
    last.reserved = totals.reserved();
    last.managed = totals.managed_bytes;
  }
  layout_.sink().counter(
      CounterSample{section.pid, layout_.timeline_ns(section, event.time_ns), name, values, count});
  ++counter_events_;
}

}  // namespace proflaunch::tools::timeline
