// Events that exist for the readers of PyTorch profiler (Kineto) traces,
// HTA above all (tools/README.md, "Kineto compatibility"): the steps of the
// training loop as ProfilerStep#N, and each synchronization as a cuda_sync
// event beside the GPU's work.

#include <algorithm>
#include <string>

#include "tools/proftrace/timeline/operation_args.h"
#include "tools/proftrace/timeline/slice_writer.h"

namespace proflaunch::tools::timeline {

using namespace proflaunch::format;

namespace {

// CUPTI's synchronization types as Kineto names them (its syncTypeString);
// nullptr: no counterpart (an implicit sync inside a blocking copy is not
// a CUPTI synchronization record).
const char* cuda_sync_name(uint8_t target) {
  switch (static_cast<SyncTarget>(target)) {
    case SyncTarget::kDevice: return "Context Sync";
    case SyncTarget::kStream: return "Stream Sync";
    case SyncTarget::kEvent: return "Event Sync";
    case SyncTarget::kStreamWaitEvent: return "Stream Wait Event";
    case SyncTarget::kImplicit: return nullptr;
  }
  return nullptr;
}

}  // namespace

void SliceWriter::profiler_steps(SectionContext& section, uint32_t tid, const std::vector<stats::Step>& steps,
                                 const char* source) {
  // A track of their own beside the thread, not the thread itself (Kineto's
  // place): they are known only after the pass, and a step that begins with
  // a launch call would tie with it, which the protobuf's importer pairs by
  // file order, nesting the step inside the call. HTA reads their ts and
  // dur, not their tid.
  const TrackRef track{section.pid, layout_.steps_track(section, layout_.host_tid(section, tid))};
  const Str category = intern("user_annotation");
  const Str source_text = intern(source);
  // Numbered from 0 as PyTorch's profiler numbers its steps (step_num starts
  // at 0); HTA reads the number after '#'.
  for (size_t n = 0; n < steps.size(); ++n) {
    const int64_t begin = layout_.timeline_ns(section, steps[n].begin_ns);
    const int64_t end = std::max(begin, layout_.timeline_ns(section, steps[n].end_ns));
    name_ = "ProfilerStep#" + std::to_string(n);
    begin_slice(track, begin, end, category, Str{name_, 0});
    args_.add_string("step_source", source_text);
    emit();
  }
}

void SliceWriter::cuda_sync(SectionContext& section, uint32_t tid, const SynchronizeRecord& record,
                           const interpret::EventRecorded* recorded) {
  const char* name = cuda_sync_name(record.target);
  if (name == nullptr || record.device < 0 || record.span.result != 0) return;
  const GpuPlacement track = layout_.sync_track(section, record.device, tid);
  // The host call's span: CUPTI's synchronization record times the same
  // wait from the host's side; the trace has nothing closer.
  const int64_t begin = layout_.timeline_ns(section, record.span.begin_ns);
  const int64_t end = std::max(begin, layout_.timeline_ns(section, record.span.end_ns));
  const Str kind = intern_static(name);
  begin_slice(TrackRef{track.pid, track.tid}, begin, end, intern_static("cuda_sync"), kind);
  args_.add_string("cuda_sync_kind", kind);
  const bool on_stream = record.target == static_cast<uint8_t>(SyncTarget::kStream) ||
                         record.target == static_cast<uint8_t>(SyncTarget::kStreamWaitEvent);
  // CUPTI's stream of a context or event sync is invalid: Kineto writes -1.
  if (on_stream && record.stream != 0) args_.add_uint("stream", section.stream_id(record.stream, tid));
  else args_.add_int("stream", -1);
  // The host call's correlation, as CUPTI gives the sync its call's.
  args_.add_uint("correlation", record.span.correlation_id);
  add_device(args_, "device", record.device);
  args_.add_uint("context", record.context);
  if (record.target == static_cast<uint8_t>(SyncTarget::kEvent) ||
      record.target == static_cast<uint8_t>(SyncTarget::kStreamWaitEvent)) {
    // The event's record this wait waits for (the interpretation pass's:
    // the last one that began before the wait): its stream as GPU work
    // shows it, and its call's correlation, which HTA's critical path joins
    // to the cudaEventRecord slice. Unknown (recorded before the trace, by
    // an older shim): -1, as Kineto writes when CUPTI reported no record.
    if (recorded != nullptr) {
      args_.add_uint("wait_on_stream", section.stream_id(recorded->stream, recorded->tid));
      args_.add_uint("wait_on_cuda_event_record_corr_id", recorded->correlation_id);
    } else {
      args_.add_int("wait_on_stream", -1);
      args_.add_int("wait_on_cuda_event_record_corr_id", -1);
    }
    args_.add_uint("wait_on_cuda_event_id", record.event);
  }
  emit();
}

}  // namespace proflaunch::tools::timeline
