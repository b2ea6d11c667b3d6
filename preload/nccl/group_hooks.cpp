// ncclGroupStart / ncclGroupEnd. Groups nest per thread; the outermost
// ncclGroupEnd launches the members' kernels, one per (communicator,
// stream). That call opens a library frame with one entry per stream the
// members used, so each stream's launch carries the correlation id of a
// CollectiveGroup record for that stream and is timed from when the stream
// reached the group.
#include <nccl.h>

#include "preload/cuda/current_context.h"
#include "preload/cuda/library_frame.h"
#include "preload/nccl/nccl_call.h"
#include "preload/nccl/nccl_hooks.h"

namespace proflaunch::nccl {
namespace {

void* real_ncclGroupStart;
void* real_ncclGroupEnd;

void record_group(const GroupState& group, const GroupStream* stream, uint64_t begin, uint64_t correlation,
                  ncclResult_t result) {
  if (auto* record = emit<format::CollectiveGroupRecord>()) {
    record->device = stream != nullptr ? stream->device : -1;
    record->span = {begin, now_ticks(), correlation, static_cast<int32_t>(result),
                    static_cast<uint16_t>(NcclApi::ncclGroupEnd), format::kApiAsync};
    record->group_id = group.group_id;
    record->stream = stream != nullptr ? stream->stream : 0;
    record->members = stream != nullptr ? stream->members : 0;
    commit();
  }
}

template <typename CallReal>
ncclResult_t outermost_group_end(CallReal&& call_real) {
  GroupState& group = tls_group;
  const uint64_t begin = now_ticks();
  CUcontext current = nullptr;
  bool any_context = false;
  for (uint32_t i = 0; i < group.stream_count; ++i) any_context |= group.streams[i].context != nullptr;
  if (any_context) cuda::current_device(&current);
  cuda::LibraryFrame& frame = cuda::tls_library_frame;
  uint64_t correlations[kMaxGroupStreams];
  frame.count = 0;
  for (uint32_t i = 0; i < group.stream_count; ++i) {
    const GroupStream& s = group.streams[i];
    correlations[i] = next_correlation_id();
    // A start event only in the current context (the event pool's); other
    // streams' kernels time themselves.
    if (s.context == nullptr || s.context != current) continue;
    frame.entries[frame.count++] =
        cuda::LibraryFrameEntry::make(s.runs_on, correlations[i], cuda::library_frame_start(s.runs_on, current));
  }
  const ncclResult_t result = call_real();
  for (uint32_t i = 0; i < frame.count; ++i) {
    const cuda::LibraryFrameEntry& entry = frame.entries[i];
    if (!entry.taken) {
      const cuda::TimingToken start = entry.start();
      cuda::owner_of(start).release(start);
    }
  }
  frame.count = 0;
  // A stream whose kernel timed itself gets the launch's own correlation
  // id, which this record cannot know: its CollectiveGroup record keeps a
  // fresh one (the members' GPU time is then not linked; see README).
  for (uint32_t i = 0; i < group.stream_count; ++i) record_group(group, &group.streams[i], begin, correlations[i], result);
  if (group.stream_count == 0) record_group(group, nullptr, begin, next_correlation_id(), result);
  group.stream_count = 0;
  group.group_id = 0;
  return result;
}

}  // namespace
}  // namespace proflaunch::nccl

namespace pn = proflaunch::nccl;

extern "C" {

PROFLAUNCH_EXPORT ncclResult_t ncclGroupStart() {
  auto* real = ::proflaunch::hooks::real_function<decltype(::ncclGroupStart)>(pn::real_ncclGroupStart,
                                                                              "ncclGroupStart", pn::kNcclLibrary);
  if (real == nullptr) return ncclSystemError;
  if (!pn::nccl_recording()) return real();
  pn::NcclCallScope scope;
  const uint64_t begin = proflaunch::now_ticks();
  const ncclResult_t result = real();
  pn::GroupState& group = pn::tls_group;
  if (result == ncclSuccess && group.depth++ == 0) {
    group.group_id = proflaunch::next_correlation_id();
    group.stream_count = 0;
  }
  pn::record_api_call(pn::NcclApi::ncclGroupStart, begin, result);
  return result;
}

PROFLAUNCH_EXPORT ncclResult_t ncclGroupEnd() {
  auto* real = ::proflaunch::hooks::real_function<decltype(::ncclGroupEnd)>(pn::real_ncclGroupEnd, "ncclGroupEnd",
                                                                            pn::kNcclLibrary);
  if (real == nullptr) return ncclSystemError;
  if (!pn::nccl_recording()) return real();
  pn::NcclCallScope scope;
  pn::GroupState& group = pn::tls_group;
  if (group.depth == 1) {
    group.depth = 0;
    return pn::outermost_group_end(real);
  }
  const uint64_t begin = proflaunch::now_ticks();
  if (group.depth > 0) --group.depth;
  const ncclResult_t result = real();
  pn::record_api_call(pn::NcclApi::ncclGroupEnd, begin, result);
  return result;
}

}  // extern "C"

namespace proflaunch::nccl {

hooks::HookFamily nccl_group_hooks() {
  static const intercept::HookEntry kHooks[] = {
      PROFLAUNCH_HOOK(ncclGroupStart, nullptr, 0, false, kNcclLibrary, real_ncclGroupStart),
      PROFLAUNCH_HOOK(ncclGroupEnd, nullptr, 0, false, kNcclLibrary, real_ncclGroupEnd),
  };
  return {kHooks, std::size(kHooks)};
}

}  // namespace proflaunch::nccl
