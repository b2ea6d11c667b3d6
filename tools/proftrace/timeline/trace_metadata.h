// What a trace says about the job as a whole, written once before any event:
// the rank of the traced job and its GPUs. The JSON puts them at its top as
// the PyTorch profiler (Kineto) does, "distributedInfo" and
// "deviceProperties", which Holistic Trace Analysis and the TensorBoard
// plugin read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "formats/records.h"

namespace proflaunch::tools {
class TraceModel;
}

namespace proflaunch::tools::timeline {

struct DistributedInfo {
  int32_t rank = -1;
  int32_t world_size = -1;  // -1: WORLD_SIZE was not set
  bool collectives = false;  // the job called NCCL (or RCCL): backend "nccl"
};

struct GpuProperties {
  int32_t ordinal = 0;  // as the runtime numbers it (HIP's for AMD devices)
  bool known = false;   // false: no DeviceInfo for it; only its ordinal is known
  std::string name;
  format::DeviceInfoRecord info{};  // 0 in a field: not known
};

struct TraceMetadata {
  // Only when every traced process with a rank has the same one: a file per
  // rank, as HTA reads them. A file holding several ranks has none.
  std::optional<DistributedInfo> distributed;
  // Every ordinal from 0 to the highest seen, so that an ordinal indexes the
  // list (the TensorBoard plugin looks devices up that way). Of one vendor:
  // NVIDIA's when the trace has both (a process using both runtimes).
  std::vector<GpuProperties> devices;
};

TraceMetadata trace_metadata(const TraceModel& model);

}  // namespace proflaunch::tools::timeline
