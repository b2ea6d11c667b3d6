// CPU samples and blocking calls on the timeline (slice_writer.h).
#include <cstdio>

#include "tools/proftrace/interpret/blocking_calls.h"
#include "tools/proftrace/timeline/slice_writer.h"

namespace proflaunch::tools::timeline {

using namespace proflaunch::format;

void SliceWriter::cpu_sample(SectionContext& section, uint32_t tid, const CpuSampleRecord& record,
                             CallStackRef stack) {
  ++stats_.cpu_samples;
  args_.clear();
  args_.add_uint("thread_cpu_ns", record.thread_cpu_ns);
  if (record.flags & kCpuSampleInTracedCall) args_.add_bool("in_traced_call", true);
  Instant instant{TrackRef{section.pid, layout_.host_tid(section, tid)},
                  layout_.timeline_ns(section, record.time_ns),
                  InstantScope::kThread,
                  intern_static("cpu_sample"),
                  intern_static("CPU sample"),
                  &args_,
                  true,
                  {}};
  if (stacks_ && !stack.empty() && section.model != nullptr) {
    instant.stack = StackRef{section.model, kNoLeafApi, stack};
    args_.add_stack();
  }
  out_.instant(instant);
}

void SliceWriter::blocking_call(SectionContext& section, uint32_t tid, const BlockingCallRecord& record,
                                CallStackRef stack) {
  ++stats_.blocking_calls;
  begin_api_slice(section, place_api(section, tid, record.span), record.span, 0, stack);
  --stats_.api_slices;  // counted as a blocking call, not an API slice
  const std::string object = interpret::wait_object_text(record);
  if (!object.empty()) {
    name_ = std::string(slice_.name.text) + " (" + object + ")";
    slice_.name = Str{name_, 0};
  }
  args_.add_string("waited_on", intern(interpret::wait_object_kind_name(record.object_kind)));
  if (record.object_kind != static_cast<uint8_t>(WaitObjectKind::kNone)) {
    if (object.find(" fd ") != std::string::npos || object.rfind("child", 0) == 0)
      args_.add_int("object", static_cast<int64_t>(record.object));
    else
      args_.add_text("object", object.substr(object.rfind(' ') + 1));
  }
  if (record.error != 0) args_.add_int("errno", record.error);
  emit();
}

}  // namespace proflaunch::tools::timeline
