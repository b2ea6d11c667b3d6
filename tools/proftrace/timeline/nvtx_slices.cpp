// NVTX ranges and marks (SliceWriter::nvtx_event). Push/pop ranges nest per
// thread and domain, so each (thread, domain) gets its own track next to the
// thread's API track: the API slices keep their own nesting. Start/end ranges
// may overlap and cross threads: async slices of their process. Ranges are
// Kineto's user_annotation (record_function ranges in PyTorch traces), their
// GPU projections its gpu_user_annotation; marks and waits for user
// synchronization objects, which Kineto has no name for, are "nvtx".
#include "tools/proftrace/timeline/slice_writer.h"
#include "tools/proftrace/timeline/time_math.h"
#include "tools/proftrace/record_text.h"

namespace proflaunch::tools::timeline {

using namespace proflaunch::format;

namespace {

uint64_t section_key(const SectionContext& section) {
  return section.model != nullptr ? section.model->section_id : section.pid;
}

std::string range_name(const SectionContext& section, const NvtxEventRecord& record, std::string_view inline_text) {
  std::string name = section.model != nullptr ? section.model->nvtx_message(record, inline_text) : std::string(inline_text);
  return name.empty() ? std::string("(unnamed)") : name;
}

}  // namespace

void SliceWriter::add_nvtx_args(const SectionContext& section, const NvtxEventRecord& record) {
  const std::string_view domain =
      section.model != nullptr ? section.model->nvtx_domain_name(record.domain) : std::string_view();
  if (!domain.empty()) args_.add_string("domain", intern(domain));
  else args_.add_text("domain", record.domain == 0 ? "default" : hex(record.domain));
  if (record.category != 0) {
    args_.add_number("category", record.category);
    const std::string_view category =
        section.model != nullptr ? section.model->nvtx_name(NvtxNameKind::kCategory, record.domain, record.category)
                                 : std::string_view();
    if (!category.empty()) args_.add_string("category_name", intern(category));
  }
  if (record.payload_type != 0) args_.add_text("payload", nvtx_payload_text(record.payload_type, record.payload));
  if (record.flags & kNvtxColor) args_.add_text("color", hex(record.color));
  if (record.flags & kNvtxTruncated) args_.add_bool("truncated", true);
}

void SliceWriter::close_nvtx_projection(uint64_t id) {
  if (auto projection = nvtx_projections_.find(id); projection != nvtx_projections_.end()) {
    projection->second.closed = true;
    nvtx_projection_settle(id);
  }
}

void SliceWriter::settle_ended_nvtx(uint64_t key, uint32_t tid, uint64_t at_ns) {
  for (auto it = nvtx_started_.lower_bound({key, 0}); it != nvtx_started_.end() && it->first.first == key;) {
    if (it->second.end_ns != 0 && it->second.tid == tid && it->second.end_ns < at_ns) {
      close_nvtx_projection(it->second.id);
      it = nvtx_started_.erase(it);
    } else {
      ++it;
    }
  }
}

void SliceWriter::write_nvtx_range(const OpenNvtxRange& open, uint64_t end_ns, bool open_at_end) {
  // A start range's projection waits for its thread (settle_ended_nvtx).
  if (open.record.type == static_cast<uint8_t>(NvtxEventType::kPush) || open_at_end) close_nvtx_projection(open.id);
  SectionContext& section = *open.section;
  const int64_t begin = layout_.timeline_ns(section, open.begin_ns);
  const int64_t end = layout_.timeline_ns(section, end_ns);
  ++stats_.nvtx_ranges;
  if (open.record.type == static_cast<uint8_t>(NvtxEventType::kPush)) {
    // The track first: naming a new one writes an event of its own.
    const uint32_t track = layout_.nvtx_track(section, open.tid, open.record.domain);
    begin_slice(TrackRef{section.pid, track}, begin, end, intern("user_annotation"), Str{open.name, 0});
    add_nvtx_args(section, open.record);
    if (open_at_end) args_.add_bool("open_at_end", true);
    emit();
    return;
  }
  // A start/end range: it may overlap others and cross threads.
  args_.clear();
  add_nvtx_args(section, open.record);
  if (open_at_end) args_.add_bool("open_at_end", true);
  const std::string id = hex(open.record.range_id);
  out_.async_slice(AsyncSlice{TrackRef{section.pid, layout_.host_tid(section, open.tid)}, begin, end,
                              intern("user_annotation"),
                              Str{open.name, 0}, id, &args_});
}

void SliceWriter::nvtx_event(SectionContext& section, uint32_t tid, const NvtxEventRecord& record,
                             std::string_view inline_message) {
  const uint64_t key = section_key(section);
  uint64_t& last = nvtx_last_ns_[key];
  if (record.span.end_ns > last) last = record.span.end_ns;
  if (!nvtx_started_.empty()) settle_ended_nvtx(key, tid, record.span.begin_ns);
  switch (static_cast<NvtxEventType>(record.type)) {
    case NvtxEventType::kPush:
      nvtx_pushed_[{key, tid, record.domain}].push_back(OpenNvtxRange{
          &section, tid, record.span.end_ns, record, range_name(section, record, inline_message), nvtx_next_id_++});
      break;
    case NvtxEventType::kPop: {
      auto found = nvtx_pushed_.find({key, tid, record.domain});
      if (found == nvtx_pushed_.end() || found->second.empty()) break;  // unmatched: nothing to close
      write_nvtx_range(found->second.back(), record.span.begin_ns, false);
      found->second.pop_back();
      break;
    }
    case NvtxEventType::kStart: {
      const OpenNvtxRange open{&section, tid, record.span.end_ns, record, range_name(section, record, inline_message),
                               nvtx_next_id_++};
      // Records of different threads are not in time order in the file:
      // an end read first waits here for its start.
      OpenNvtxRange& started = nvtx_started_[{key, record.range_id}] = open;
      if (auto early = nvtx_ended_early_.find({key, record.range_id}); early != nvtx_ended_early_.end()) {
        started.end_ns = std::max(early->second, open.begin_ns);
        write_nvtx_range(started, started.end_ns, false);
        nvtx_ended_early_.erase(early);
      }
      break;
    }
    case NvtxEventType::kEnd: {
      auto found = nvtx_started_.find({key, record.range_id});
      if (found == nvtx_started_.end()) {
        nvtx_ended_early_[{key, record.range_id}] = record.span.begin_ns;
        break;
      }
      if (found->second.end_ns != 0) break;  // ended twice: the first end stands
      found->second.end_ns = std::max<uint64_t>(record.span.begin_ns, found->second.begin_ns);
      write_nvtx_range(found->second, found->second.end_ns, false);
      break;
    }
    case NvtxEventType::kSyncAcquireStart:
      nvtx_acquiring_[{key, tid, record.range_id}] = record.span.begin_ns;
      break;
    case NvtxEventType::kSyncAcquireSuccess:
    case NvtxEventType::kSyncAcquireFailed: {
      // The wait: "acquire <object>" on the thread's NVTX track.
      auto found = nvtx_acquiring_.find({key, tid, record.range_id});
      if (found == nvtx_acquiring_.end()) break;
      const uint32_t track = layout_.nvtx_track(section, tid, record.domain);
      const std::string_view object =
          section.model != nullptr ? section.model->nvtx_name(NvtxNameKind::kSyncUser, record.domain, record.range_id)
                                   : std::string_view();
      const int64_t begin = layout_.timeline_ns(section, found->second);
      const int64_t end = layout_.timeline_ns(section, record.span.end_ns);
      name_ = "acquire " + (object.empty() ? hex(record.range_id) : std::string(object));
      begin_slice(TrackRef{section.pid, track}, begin, end, intern("nvtx"), Str{name_, 0});
      args_.add_bool("acquired", record.type == static_cast<uint8_t>(NvtxEventType::kSyncAcquireSuccess));
      emit();
      nvtx_acquiring_.erase(found);
      ++stats_.nvtx_ranges;
      break;
    }
    case NvtxEventType::kSyncReleasing: break;  // its release is the end of the holder's work: no slice
    case NvtxEventType::kMark: {
      const uint32_t track = layout_.nvtx_track(section, tid, record.domain);
      name_ = range_name(section, record, inline_message);
      args_.clear();
      add_nvtx_args(section, record);
      out_.instant(Instant{TrackRef{section.pid, track}, layout_.timeline_ns(section, record.span.begin_ns),
                           InstantScope::kThread, intern("nvtx"), Str{name_, 0}, &args_, false, {}});
      ++stats_.nvtx_marks;
      break;
    }
  }
}

void SliceWriter::finish_nvtx() {
  for (auto& [key, stack] : nvtx_pushed_) {
    const uint64_t last = nvtx_last_ns_[std::get<0>(key)];
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) write_nvtx_range(*it, std::max(last, it->begin_ns), true);
    stack.clear();
  }
  for (auto& [key, open] : nvtx_started_) {
    if (open.end_ns != 0) {
      close_nvtx_projection(open.id);  // ended, its slice written
      continue;
    }
    const uint64_t last = nvtx_last_ns_[key.first];
    write_nvtx_range(open, std::max(last, open.begin_ns), true);
  }
  nvtx_started_.clear();
  // Every operation has been joined by now: what is still pending never
  // got its GPU side.
  std::vector<uint64_t> remaining;
  for (auto& [id, projection] : nvtx_projections_) {
    projection.pending = 0;
    projection.closed = true;
    remaining.push_back(id);
  }
  for (uint64_t id : remaining) nvtx_projection_settle(id);
  nvtx_waiting_.clear();
}

void SliceWriter::nvtx_note_operation(SectionContext& section, uint32_t tid, const ApiSpan& span) {
  if (nvtx_pushed_.empty() && nvtx_started_.empty()) return;
  const uint64_t key = section_key(section);
  settle_ended_nvtx(key, tid, span.begin_ns);
  std::vector<uint64_t> ids;
  auto note = [&](const OpenNvtxRange& open) {
    NvtxProjection& projection = nvtx_projections_[open.id];
    if (projection.section == nullptr) {
      projection.section = open.section;
      projection.tid = open.tid;
      projection.name = open.name;
    }
    ++projection.pending;
    ids.push_back(open.id);
  };
  for (auto it = nvtx_pushed_.lower_bound({key, tid, 0});
       it != nvtx_pushed_.end() && std::get<0>(it->first) == key && std::get<1>(it->first) == tid; ++it)
    for (const OpenNvtxRange& open : it->second) note(open);
  for (const auto& [started_key, open] : nvtx_started_)
    if (started_key.first == key && open.tid == tid && (open.end_ns == 0 || span.begin_ns <= open.end_ns)) note(open);
  if (!ids.empty()) nvtx_waiting_[{key, span.correlation_id}] = std::move(ids);
}

void SliceWriter::nvtx_operation_done(const HostOperation& operation, const DeviceActivity* activity,
                                      const GpuPlacement* placement) {
  if (nvtx_waiting_.empty()) return;
  auto it = nvtx_waiting_.find({section_key(*operation.context), operation.span().correlation_id});
  if (it == nvtx_waiting_.end()) return;
  for (uint64_t id : it->second) {
    auto found = nvtx_projections_.find(id);
    if (found == nvtx_projections_.end()) continue;
    NvtxProjection& projection = found->second;
    if (activity != nullptr && placement != nullptr) {
      const NvtxProjection::TrackSpan work{activity->activity.device, placement->start_ns, placement->end_ns,
                                           activity->activity.start_ns, activity->activity.end_ns};
      auto [span, inserted] = projection.by_track.try_emplace({placement->pid, placement->tid}, work);
      if (!inserted) {
        NvtxProjection::TrackSpan& kept = span->second;
        kept.begin = std::min(kept.begin, work.begin);
        kept.end = std::max(kept.end, work.end);
        kept.first_start_ns = std::min(kept.first_start_ns, work.first_start_ns);
        kept.last_end_ns = std::max(kept.last_end_ns, work.last_end_ns);
      }
    } else if (activity != nullptr) {
      auto [span, inserted] = projection.by_device.try_emplace(activity->activity.device,
                                                                activity->activity.start_ns, activity->activity.end_ns);
      if (!inserted) {
        span->second.first = std::min(span->second.first, activity->activity.start_ns);
        span->second.second = std::max(span->second.second, activity->activity.end_ns);
      }
    }
    if (projection.pending > 0) --projection.pending;
    nvtx_projection_settle(id);
  }
  nvtx_waiting_.erase(it);
}

void SliceWriter::nvtx_projection_settle(uint64_t id) {
  auto found = nvtx_projections_.find(id);
  if (found == nvtx_projections_.end() || !found->second.closed || found->second.pending != 0) return;
  NvtxProjection& projection = found->second;
  // On the streams (Kineto's way), where the annotation nests with the
  // others already there; the rest on the device's NVTX GPU ranges track.
  for (const auto& [track, span] : projection.by_track) {
    if (!annotation_fits(track, span.begin, span.end)) {
      auto [kept, inserted] = projection.by_device.try_emplace(span.device, span.first_start_ns, span.last_end_ns);
      if (!inserted) {
        kept->second.first = std::min(kept->second.first, span.first_start_ns);
        kept->second.second = std::max(kept->second.second, span.last_end_ns);
      }
      continue;
    }
    begin_slice(TrackRef{track.first, track.second}, span.begin, span.end, intern("gpu_user_annotation"),
                Str{projection.name, 0});
    args_.add_string("projection", intern("first GPU start to last GPU end of the work the range launched"));
    emit();
    ++stats_.nvtx_gpu_ranges;
  }
  for (const auto& [device, span] : projection.by_device) {
    SectionContext& section = *projection.section;
    const GpuPlacement track = layout_.nvtx_gpu_track(section, device, projection.tid);
    const int64_t begin = layout_.timeline_ns(section, span.first);
    const int64_t end = layout_.timeline_ns(section, span.second);
    begin_slice(TrackRef{track.pid, track.tid}, begin, end, intern("gpu_user_annotation"), Str{projection.name, 0});
    args_.add_string("projection", intern("first GPU start to last GPU end of the work the range launched"));
    emit();
    ++stats_.nvtx_gpu_ranges;
  }
  nvtx_projections_.erase(found);
}

bool SliceWriter::annotation_fits(std::pair<uint32_t, uint32_t> track, int64_t begin, int64_t end) {
  std::multimap<int64_t, int64_t>& written = stream_annotations_[track];
  for (auto it = written.begin(); it != written.end() && it->first < end; ++it) {
    const int64_t a = it->first, b = it->second;
    if (b <= begin) continue;  // apart
    const bool inside = a <= begin && end <= b;
    const bool around = begin <= a && b <= end;
    if (!inside && !around) return false;
  }
  written.emplace(begin, end);
  return true;
}

}  // namespace proflaunch::tools::timeline
