// NCCL records as slices on their host thread (category "collective").
#include "tools/proftrace/collective_text.h"
#include "tools/proftrace/timeline/operation_args.h"
#include "tools/proftrace/timeline/slice_writer.h"
#include "tools/proftrace/record_text.h"

namespace proflaunch::tools::timeline {

using namespace proflaunch::format;

std::string instance_label(uint64_t comm_id, uint64_t sequence) { return hex(comm_id) + "/" + std::to_string(sequence); }

std::string instance_label(const interpret::CollectiveInstance& instance) {
  return instance.group ? "group " + std::to_string(instance.group_id)
                        : instance_label(instance.comm_id, instance.sequence);
}

// Outside a group a collective call, and a group's end, carry the
// correlation id of the kernel launch they made: that launch's slice is the
// one with it as "correlation" (Kineto: one id, one host event and its GPU
// work; HTA joins on it), so these name it "kernel_correlation".
constexpr const char* kKernelCorrelation = "kernel_correlation";

void SliceWriter::collective(SectionContext& section, uint32_t tid, const CollectiveRecord& record,
                             CallStackRef stack) {
  begin_api_slice(section, place_api(section, tid, record.span), record.span, 0, stack,
                  record.group_depth == 0 ? kKernelCorrelation : "correlation");
  args_.add_string("op", intern(collective_op_name(record.op)));
  if (record.sequence != 0) {
    args_.add_text("collective", instance_label(record.comm_id, record.sequence));
  }
  args_.add_text("comm_id", hex(record.comm_id));
  args_.add_number("sequence", record.sequence);
  args_.add_number("count", record.count);
  args_.add_number("bytes", record.bytes);
  args_.add_string("datatype", intern(nccl_datatype_name(record.datatype)));
  if (record.reduction != 255) args_.add_string("reduction", intern(nccl_reduction_name(record.reduction)));
  const auto op = static_cast<CollectiveOp>(record.op);
  if (op == CollectiveOp::kSend || op == CollectiveOp::kRecv)
    args_.add_number("peer", record.root);
  else if (record.root >= 0)
    args_.add_number("root", record.root);
  args_.add_number("rank", record.rank);
  args_.add_number("nranks", record.nranks);
  add_device(args_, "device", record.device);
  args_.add_string("target_stream", section.stream_text(record.stream));
  if (record.group_id != 0) args_.add_number("group_id", record.group_id);
  emit();
}

void SliceWriter::collective_comm(SectionContext& section, uint32_t tid, const CollectiveCommRecord& record,
                                  CallStackRef stack) {
  begin_api_slice(section, place_api(section, tid, record.span), record.span, 0, stack);
  args_.add_string("action", intern(comm_action_name(record.action)));
  args_.add_text("comm", hex(record.comm));
  args_.add_text("comm_id", hex(record.comm_id));
  if (record.parent_comm_id != 0) args_.add_text("parent_comm_id", hex(record.parent_comm_id));
  args_.add_number("rank", record.rank);
  args_.add_number("nranks", record.nranks);
  add_device(args_, "device", record.device);
  emit();
}

void SliceWriter::collective_group(SectionContext& section, uint32_t tid, const CollectiveGroupRecord& record,
                                   CallStackRef stack) {
  begin_api_slice(section, place_api(section, tid, record.span), record.span, 0, stack, kKernelCorrelation);
  args_.add_number("group_id", record.group_id);
  args_.add_number("members", record.members);
  if (record.stream != 0) args_.add_string("target_stream", section.stream_text(record.stream));
  emit();
}

}  // namespace proflaunch::tools::timeline
