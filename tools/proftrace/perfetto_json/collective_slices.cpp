// NCCL records as slices on their host thread (category "collective").
#include "tools/proftrace/collective_text.h"
#include "tools/proftrace/perfetto_json/json_args.h"
#include "tools/proftrace/perfetto_json/slice_writer.h"
#include "tools/proftrace/record_text.h"

namespace proflaunch::tools::perfetto_json {

using namespace proflaunch::format;

namespace {

constexpr size_t kMaxCollectiveLabels = size_t{1} << 16;

uint64_t label_key(const SectionContext& section, uint64_t correlation_id) {
  const uint64_t section_id = section.model != nullptr ? section.model->section_id : section.pid;
  return (section_id * 0x9E3779B97F4A7C15ull) ^ correlation_id;
}

std::string instance_label(uint64_t comm_id, uint64_t sequence) { return hex(comm_id) + "/" + std::to_string(sequence); }

}  // namespace

void SliceWriter::remember_collective_label(uint64_t key, std::string label) {
  if (collective_label_order_.size() >= kMaxCollectiveLabels) {
    // Drop the older half: their kernels' slices were written long ago.
    for (size_t i = 0; i < kMaxCollectiveLabels / 2; ++i) collective_labels_.erase(collective_label_order_[i]);
    collective_label_order_.erase(collective_label_order_.begin(),
                                  collective_label_order_.begin() + kMaxCollectiveLabels / 2);
  }
  collective_labels_[key] = std::move(label);
  collective_label_order_.push_back(key);
}

const std::string* SliceWriter::collective_label(uint64_t key) const {
  auto found = collective_labels_.find(key);
  return found != collective_labels_.end() ? &found->second : nullptr;
}

const std::string* SliceWriter::collective_label_for(const SectionContext& section, uint64_t correlation_id) const {
  return collective_label(label_key(section, correlation_id));
}

void SliceWriter::collective(SectionContext& section, uint32_t tid, const CollectiveRecord& record,
                             CallStackRef stack) {
  JsonWriter& w = begin_api_slice(section, place_api(section, tid, record.span), record.span, 0, stack);
  write_string_arg(w, "op", collective_op_name(record.op));
  if (record.sequence != 0) {
    const std::string label = instance_label(record.comm_id, record.sequence);
    write_string_arg(w, "collective", label);
  }
  write_string_arg(w, "comm_id", hex(record.comm_id));
  write_number_arg(w, "sequence", record.sequence);
  write_number_arg(w, "count", record.count);
  write_number_arg(w, "bytes", record.bytes);
  write_string_arg(w, "datatype", nccl_datatype_name(record.datatype));
  if (record.reduction != 255) write_string_arg(w, "reduction", nccl_reduction_name(record.reduction));
  const auto op = static_cast<CollectiveOp>(record.op);
  if (op == CollectiveOp::kSend || op == CollectiveOp::kRecv)
    write_number_arg(w, "peer", record.root);
  else if (record.root >= 0)
    write_number_arg(w, "root", record.root);
  write_number_arg(w, "rank", record.rank);
  write_number_arg(w, "nranks", record.nranks);
  write_number_arg(w, "device", record.device);
  write_json_arg(w, "stream", section.stream_json_text(record.stream));
  if (record.group_id != 0) write_number_arg(w, "group_id", record.group_id);
  w.raw("}}");
}

void SliceWriter::collective_comm(SectionContext& section, uint32_t tid, const CollectiveCommRecord& record,
                                  CallStackRef stack) {
  JsonWriter& w = begin_api_slice(section, place_api(section, tid, record.span), record.span, 0, stack);
  write_string_arg(w, "action", comm_action_name(record.action));
  write_string_arg(w, "comm", hex(record.comm));
  write_string_arg(w, "comm_id", hex(record.comm_id));
  if (record.parent_comm_id != 0) write_string_arg(w, "parent_comm_id", hex(record.parent_comm_id));
  write_number_arg(w, "rank", record.rank);
  write_number_arg(w, "nranks", record.nranks);
  write_number_arg(w, "device", record.device);
  w.raw("}}");
}

void SliceWriter::collective_group(SectionContext& section, uint32_t tid, const CollectiveGroupRecord& record,
                                   CallStackRef stack) {
  JsonWriter& w = begin_api_slice(section, place_api(section, tid, record.span), record.span, 0, stack);
  write_number_arg(w, "group_id", record.group_id);
  write_number_arg(w, "members", record.members);
  if (record.stream != 0) write_json_arg(w, "stream", section.stream_json_text(record.stream));
  w.raw("}}");
}

void SliceWriter::note_collective_label(SectionContext& section, const RecordView& view) {
  if (view.record_kind() == RecordKind::kCollective) {
    const auto record = view.as<CollectiveRecord>();
    // Members of a group share the group's kernel; the group labels it.
    if (record.sequence != 0 && record.group_id == 0)
      remember_collective_label(label_key(section, record.span.correlation_id),
                                instance_label(record.comm_id, record.sequence));
  } else if (view.record_kind() == RecordKind::kCollectiveGroup) {
    const auto record = view.as<CollectiveGroupRecord>();
    remember_collective_label(label_key(section, record.span.correlation_id),
                              "group " + std::to_string(record.group_id));
  }
}

}  // namespace proflaunch::tools::perfetto_json
