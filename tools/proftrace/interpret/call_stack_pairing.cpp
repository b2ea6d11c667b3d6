#include "tools/proftrace/interpret/call_stack_pairing.h"

#include <cstring>


namespace proflaunch::tools::interpret {

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

void CallStackPairing::release(Held& held, Stacks stack) {
  const Section* section = held.section;
  held.section = nullptr;
  release_(*section, held.view, stack, held.ordinal);
}

bool CallStackPairing::offer(const Section& section, const RecordView& record, uint64_t ordinal) {
  if (record.record_kind() == RecordKind::kCallStack) {
    const auto call_stack = record.as<CallStackRecord>();
    auto found = held_.find(thread_key(record));
    if (found != held_.end() && found->second.section != nullptr &&
        correlation_of(found->second.view) == call_stack.correlation_id) {
      release(found->second, Stacks{call_stack.native_stack, call_stack.python_stack, call_stack.point});
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
  held.ordinal = ordinal;
  return true;
}

void CallStackPairing::flush() {
  for (auto& [key, held] : held_)
    if (held.section != nullptr) release(held, {});
  held_.clear();
}

}  // namespace proflaunch::tools::interpret
