// NVTX ranges and marks (SliceWriter::nvtx_event). Push/pop ranges nest per
// thread and domain, so each (thread, domain) gets its own track next to the
// thread's API track: the API slices keep their own nesting. Start/end ranges
// may overlap and cross threads: async slices of their process.
#include "tools/proftrace/json_writer.h"
#include "tools/proftrace/perfetto_json/json_args.h"
#include "tools/proftrace/perfetto_json/slice_writer.h"
#include "tools/proftrace/perfetto_json/time_math.h"
#include "tools/proftrace/record_text.h"

namespace proflaunch::tools::perfetto_json {

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

JsonWriter& SliceWriter::begin_nvtx_slice(const std::string& name, uint32_t pid, uint32_t tid, int64_t begin,
                                          int64_t end) {
  JsonWriter& w = out_.next_event();
  w.raw("{\"ph\":\"X\",\"cat\":\"nvtx\",\"name\":");
  w.quoted(name);
  w.raw(",\"pid\":");
  w.number(pid);
  w.raw(",\"tid\":");
  w.number(tid);
  w.raw(",\"ts\":");
  w.microseconds(begin);
  w.raw(",\"dur\":");
  w.microseconds(difference_ns(end, begin));
  return w;
}

void SliceWriter::write_nvtx_args(JsonWriter& w, const SectionContext& section, const NvtxEventRecord& record) {
  w.raw(",\"args\":{\"domain\":");
  std::string domain = section.model != nullptr ? std::string(section.model->nvtx_domain_name(record.domain)) : "";
  w.quoted(domain.empty() ? (record.domain == 0 ? "default" : hex(record.domain)) : domain);
  if (record.category != 0) {
    write_number_arg(w, "category", record.category);
    const std::string_view category =
        section.model != nullptr ? section.model->nvtx_name(NvtxNameKind::kCategory, record.domain, record.category)
                                 : std::string_view();
    if (!category.empty()) write_string_arg(w, "category_name", std::string(category));
  }
  if (record.payload_type != 0) write_string_arg(w, "payload", nvtx_payload_text(record.payload_type, record.payload));
  if (record.flags & kNvtxColor) write_string_arg(w, "color", hex(record.color));
  if (record.flags & kNvtxTruncated) w.raw(",\"truncated\":true");
}

void SliceWriter::write_nvtx_range(const OpenNvtxRange& open, uint64_t end_ns, bool open_at_end) {
  if (auto projection = nvtx_projections_.find(open.id); projection != nvtx_projections_.end()) {
    projection->second.closed = true;
    nvtx_projection_settle(open.id);
  }
  SectionContext& section = *open.section;
  const int64_t begin = layout_.timeline_ns(section, open.begin_ns);
  const int64_t end = layout_.timeline_ns(section, end_ns);
  ++stats_.nvtx_ranges;
  if (open.record.type == static_cast<uint8_t>(NvtxEventType::kPush)) {
    // The track first: naming a new one writes an event of its own.
    const uint32_t track = layout_.nvtx_track(section, open.tid, open.record.domain);
    JsonWriter& w = begin_nvtx_slice(open.name, section.pid, track, begin, end);
    write_nvtx_args(w, section, open.record);
    if (open_at_end) w.raw(",\"open_at_end\":true");
    w.raw("}}");
    return;
  }
  // A start/end range: an async slice ("b", then "e" with the same id).
  for (const bool opening : {true, false}) {
    JsonWriter& w = out_.next_event();
    w.raw(opening ? "{\"ph\":\"b\"" : "{\"ph\":\"e\"");
    w.raw(",\"cat\":\"nvtx\",\"name\":");
    w.quoted(open.name);
    w.raw(",\"id2\":{\"local\":");
    w.quoted(hex(open.record.range_id));
    w.raw("},\"pid\":");
    w.number(section.pid);
    w.raw(",\"tid\":");
    w.number(layout_.host_tid(section, open.tid));
    w.raw(",\"ts\":");
    w.microseconds(opening ? begin : end);
    if (opening) {
      write_nvtx_args(w, section, open.record);
      if (open_at_end) w.raw(",\"open_at_end\":true");
      w.raw("}}");
    } else {
      w.raw("}");
    }
  }
}

void SliceWriter::nvtx_event(SectionContext& section, uint32_t tid, const NvtxEventRecord& record,
                             std::string_view inline_message) {
  const uint64_t key = section_key(section);
  uint64_t& last = nvtx_last_ns_[key];
  if (record.span.end_ns > last) last = record.span.end_ns;
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
      if (auto early = nvtx_ended_early_.find({key, record.range_id}); early != nvtx_ended_early_.end()) {
        write_nvtx_range(open, std::max(early->second, open.begin_ns), false);
        nvtx_ended_early_.erase(early);
        break;
      }
      nvtx_started_[{key, record.range_id}] = open;
      break;
    }
    case NvtxEventType::kEnd: {
      auto found = nvtx_started_.find({key, record.range_id});
      if (found == nvtx_started_.end()) {
        nvtx_ended_early_[{key, record.range_id}] = record.span.begin_ns;
        break;
      }
      write_nvtx_range(found->second, record.span.begin_ns, false);
      nvtx_started_.erase(found);
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
      JsonWriter& w = begin_nvtx_slice("acquire " + (object.empty() ? hex(record.range_id) : std::string(object)),
                                       section.pid, track, begin, end);
      w.raw(",\"args\":{\"acquired\":");
      w.raw(record.type == static_cast<uint8_t>(NvtxEventType::kSyncAcquireSuccess) ? "true" : "false");
      w.raw("}}");
      nvtx_acquiring_.erase(found);
      ++stats_.nvtx_ranges;
      break;
    }
    case NvtxEventType::kSyncReleasing: break;  // its release is the end of the holder's work: no slice
    case NvtxEventType::kMark: {
      const uint32_t track = layout_.nvtx_track(section, tid, record.domain);
      JsonWriter& w = out_.next_event();
      w.raw("{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"nvtx\",\"name\":");
      w.quoted(range_name(section, record, inline_message));
      w.raw(",\"pid\":");
      w.number(section.pid);
      w.raw(",\"tid\":");
      w.number(track);
      w.raw(",\"ts\":");
      w.microseconds(layout_.timeline_ns(section, record.span.begin_ns));
      write_nvtx_args(w, section, record);
      w.raw("}}");
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
    if (started_key.first == key && open.tid == tid) note(open);
  if (!ids.empty()) nvtx_waiting_[{key, span.correlation_id}] = std::move(ids);
}

void SliceWriter::nvtx_operation_done(const HostOperation& operation, const DeviceActivity* activity) {
  if (nvtx_waiting_.empty()) return;
  auto it = nvtx_waiting_.find({section_key(*operation.section), operation.span().correlation_id});
  if (it == nvtx_waiting_.end()) return;
  for (uint64_t id : it->second) {
    auto found = nvtx_projections_.find(id);
    if (found == nvtx_projections_.end()) continue;
    NvtxProjection& projection = found->second;
    if (activity != nullptr) {
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
  const NvtxProjection& projection = found->second;
  for (const auto& [device, span] : projection.by_device) {
    SectionContext& section = *projection.section;
    const GpuPlacement track = layout_.nvtx_gpu_track(section, device, projection.tid);
    const int64_t begin = layout_.timeline_ns(section, span.first);
    const int64_t end = layout_.timeline_ns(section, span.second);
    JsonWriter& w = begin_nvtx_slice(projection.name, track.pid, track.tid, begin, end);
    w.raw(",\"args\":{\"projection\":\"first GPU start to last GPU end of the work the range launched\"}}");
    ++stats_.nvtx_gpu_ranges;
  }
  nvtx_projections_.erase(found);
}

}  // namespace proflaunch::tools::perfetto_json
