// The NCCL side of a trace, per traced process: its rank, the collective
// records, and the launches and GPU activities by correlation id.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "formats/records.h"

namespace proflaunch::e2e {

struct RankTrace {
  int32_t rank = -1;
  uint32_t pid = 0;
  bool ended = false;  // SectionEnd present: the process finished cleanly
  std::vector<format::CollectiveRecord> collectives;
  std::vector<format::CollectiveCommRecord> comms;
  std::vector<format::CollectiveGroupRecord> groups;
  std::map<uint64_t, format::KernelLaunchRecord> launches;  // by correlation id
  std::map<uint64_t, std::string> kernel_names;             // launch correlation id -> mangled name
  std::map<uint64_t, format::GpuActivityRecord> activities;  // by correlation id
  uint64_t unattributed = 0;           // UnattributedGpuWork records
  uint8_t gpu_timing_source = 0xff;    // the last GpuTimingInfo's source (0xff: none)

  std::vector<const format::CollectiveRecord*> of(format::CollectiveOp op) const;
};

// Every traced process with a rank, by rank. Fails the test (non-fatally)
// and returns what it could read when a file is unreadable.
std::map<int32_t, RankTrace> load_rank_traces(const std::vector<std::string>& paths);

}  // namespace proflaunch::e2e
