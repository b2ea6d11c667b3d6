#include "tools/proftrace/timeline/call_stack_pairing.h"

#include <cstring>

#include "tools/proftrace/timeline/track_layout.h"

namespace proflaunch::tools::timeline {

using namespace format;

namespace {

uint64_t thread_key(const RecordView& record) {
  return record.section_id * 0x9E3779B97F4A7C15ull ^ record.tid;
}

uint64_t correlation_of(const RecordView& record) {
  ApiSpan span;
  std::memcpy(&span, record.data + kApiSpanOffset, sizeof span);
  return span.correlation_id;
}

}  // namespace

void CallStackPairing::release(Held& held, CallStackRef stack) {
  SectionContext* section = held.section;
  held.section = nullptr;
  release_(*section, held.view, stack);
}

bool CallStackPairing::offer(SectionContext& section, const RecordView& record) {
  if (record.record_kind() == RecordKind::kCallStack) {
    const auto call_stack = record.as<CallStackRecord>();
    auto found = held_.find(thread_key(record));
    if (found != held_.end() && found->second.section != nullptr &&
        correlation_of(found->second.view) == call_stack.correlation_id) {
      release(found->second, CallStackRef{call_stack.native_stack, call_stack.python_stack});
    } else {
      ++unpaired_stacks_;
    }
    return true;
  }
  if (section.model == nullptr || section.model->stacks.empty() || !has_api_span(record.kind) ||
      record.bytes > kMaxHeldBytes || record.bytes < kApiSpanOffset + sizeof(ApiSpan))
    return false;
  Held& held = held_[thread_key(record)];
  if (held.section != nullptr) release(held, {});
  held.section = &section;
  std::memcpy(held.data, record.data, record.bytes);
  held.view = record;
  held.view.data = held.data;
  return true;
}

void CallStackPairing::flush() {
  for (auto& [key, held] : held_)
    if (held.section != nullptr) release(held, {});
  held_.clear();
}

}  // namespace proflaunch::tools::timeline
