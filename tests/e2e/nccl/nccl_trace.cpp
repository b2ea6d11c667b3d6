#include "tests/e2e/nccl/nccl_trace.h"

#include <gtest/gtest.h>

#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::e2e {

using namespace proflaunch::format;

std::vector<const CollectiveRecord*> RankTrace::of(CollectiveOp op) const {
  std::vector<const CollectiveRecord*> result;
  for (const auto& c : collectives)
    if (c.op == static_cast<uint8_t>(op)) result.push_back(&c);
  return result;
}

std::map<int32_t, RankTrace> load_rank_traces(const std::vector<std::string>& paths) {
  std::vector<tools::InputTrace> inputs;
  std::string error;
  if (!tools::open_inputs(paths, &inputs, &error)) {
    ADD_FAILURE() << error;
    return {};
  }
  tools::TraceModel model;
  tools::load_definitions(inputs, model);
  std::map<uint64_t, RankTrace> by_section;
  for (const auto& [id, section] : model.sections()) {
    RankTrace& rank = by_section[id];
    rank.rank = section.process ? section.process->rank : -1;
    rank.pid = section.pid();
    rank.ended = section.end.has_value();
  }
  struct Visitor : RecordVisitor {
    std::map<uint64_t, RankTrace>* traces;
    const tools::TraceModel* model;
    void on_record(const RecordView& record) override {
      RankTrace& t = (*traces)[record.section_id];
      switch (record.record_kind()) {
        case RecordKind::kCollective: t.collectives.push_back(record.as<CollectiveRecord>()); break;
        case RecordKind::kCollectiveComm: t.comms.push_back(record.as<CollectiveCommRecord>()); break;
        case RecordKind::kCollectiveGroup: t.groups.push_back(record.as<CollectiveGroupRecord>()); break;
        case RecordKind::kKernelLaunch: {
          const auto launch = record.as<KernelLaunchRecord>();
          t.launches[launch.span.correlation_id] = launch;
          if (const tools::SectionModel* section = model->find(record.section_id))
            t.kernel_names[launch.span.correlation_id] =
                std::string(section->function_name(launch.function, launch.span.begin_ns));
          break;
        }
        case RecordKind::kGpuActivity: {
          const auto activity = record.as<GpuActivityRecord>();
          t.activities[activity.correlation_id] = activity;
          break;
        }
        case RecordKind::kUnattributedGpuWork: ++t.unattributed; break;
        case RecordKind::kGpuTimingInfo:
          t.gpu_timing_source = record.as<GpuTimingInfoRecord>().source;
          break;
        default: break;
      }
    }
  } visitor;
  visitor.traces = &by_section;
  visitor.model = &model;
  for (auto& input : inputs) input.reader->read(visitor, ChunkSelection::kEventsOnly);
  std::map<int32_t, RankTrace> result;
  for (auto& [id, trace] : by_section)
    if (trace.rank >= 0) result[trace.rank] = std::move(trace);
  return result;
}

}  // namespace proflaunch::e2e
