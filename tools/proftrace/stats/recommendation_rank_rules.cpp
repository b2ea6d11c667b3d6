// The multi-rank rules of `recommendations`, read off nccl-ranks' analysis
// (collective_analysis.h) so that both say the same about the same ranks.
#include "tools/proftrace/stats/collective_analysis.h"
#include "tools/proftrace/stats/recommendation_finding.h"
#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {

Finding straggler_rank(const CollectiveAnalysis& analysis) {
  Finding f;
  const std::pair<const int32_t, RankTimes>* straggler = nullptr;
  int64_t communication_ns = 0;
  for (const auto& entry : analysis.ranks()) {
    communication_ns += entry.second.communication_ns;
    if (entry.second.caused_wait_ns > 0 &&
        (straggler == nullptr || entry.second.caused_wait_ns > straggler->second.caused_wait_ns))
      straggler = &entry;
  }
  uint64_t shared = 0;
  for (const auto& instance : analysis.instances()) shared += instance.arrivals.size() > 1;
  if (straggler == nullptr) {
    f.text = shared == 0 ? "no collective was seen on more than one rank"
                         : "no rank made the others wait at " + std::to_string(shared) + " collectives";
    return f;
  }
  const RankTimes& t = straggler->second;
  const double share = communication_ns > 0 ? double(t.caused_wait_ns) / double(communication_ns) : 0;
  f.totals.count = t.arrived_last;
  f.totals.gpu_ns = uint64_t(t.caused_wait_ns);
  const std::string what = "rank " + std::to_string(straggler->first) + " arrived last at " +
                           std::to_string(t.arrived_last) + " of " + std::to_string(shared) +
                           " collectives; the other ranks waited " + std::to_string(t.caused_wait_ns) +
                           " ns for it (" + format_percent(share) + "% of all ranks' communication time)";
  f.found = share >= kStragglerWaitShare;
  f.text = f.found ? what + ": look at what that rank does before its collectives (uneven data or work, "
                            "data loading, a slower GPU or link)"
                   : what + ": below the threshold";
  return f;
}

Finding exposed_communication(const CollectiveAnalysis& analysis) {
  Finding f;
  int64_t communication_ns = 0, exposed_ns = 0, worst_share_rank = -1;
  double worst_share = -1;
  for (const auto& [rank, t] : analysis.ranks()) {
    communication_ns += t.communication_ns;
    exposed_ns += t.communication_ns - t.overlap_ns;
    f.totals.count += t.collectives;
    const double share = t.communication_ns > 0 ? double(t.communication_ns - t.overlap_ns) / double(t.communication_ns) : 0;
    if (share > worst_share) {
      worst_share = share;
      worst_share_rank = rank;
    }
  }
  if (communication_ns <= 0) {
    f.text = "no collective GPU time";
    return f;
  }
  f.totals.gpu_ns = uint64_t(exposed_ns);
  const double share = double(exposed_ns) / double(communication_ns);
  const std::string what = std::to_string(exposed_ns) + " of " + std::to_string(communication_ns) +
                           " ns of collective GPU time (" + format_percent(share) +
                           "%) ran with no compute kernel alongside on its rank (most: rank " +
                           std::to_string(worst_share_rank) + ", " + format_percent(worst_share) + "%)";
  f.found = share >= kExposedCommunicationShare;
  f.text = f.found ? what + ": overlap communication with compute (DDP gradient buckets, FSDP prefetch, "
                            "collectives on their own stream)"
                   : what + ": below the threshold";
  return f;
}

}  // namespace proflaunch::tools::stats
