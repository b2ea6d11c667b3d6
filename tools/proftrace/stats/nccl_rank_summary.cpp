// nccl-ranks: per rank, GPU time in compute kernels and in collectives (the
// union of their intervals, so concurrent kernels count once) and how much
// the two overlap; how long its collectives waited for the last rank to
// arrive, and how often it was that last rank. The straggler is the rank
// whose late arrivals made the others wait longest.
#include "tools/proftrace/stats/collective_analysis.h"
#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {
namespace {

class NcclRankSummary final : public StatsSection {
 public:
  std::string name() const override { return "nccl-ranks"; }
  std::vector<interpret::Consumer*> parts() override { return {&analysis_}; }

  Table finish(const TraceModel& model) override {
    analysis_.finish(model);
    Table table;
    table.title = "NCCL ranks: compute, communication and waiting per rank";
    table.columns = {"Rank", "Compute (ns)", "Communication (ns)", "Overlap (ns)", "Collectives", "Wait (ns)",
                     "Avg Wait (ns)", "Arrived Last", "Others Waited (ns)"};
    if (analysis_.calls() == 0) return table;  // no NCCL: no table
    const std::pair<const int32_t, RankTimes>* straggler = nullptr;
    for (const auto& entry : analysis_.ranks()) {
      const auto& [rank, t] = entry;
      table.rows.push_back({rank >= 0 ? std::to_string(rank) : "-", format_ns(uint64_t(t.compute_ns)),
                            format_ns(uint64_t(t.communication_ns)), format_ns(uint64_t(t.overlap_ns)),
                            std::to_string(t.collectives), format_ns(uint64_t(t.wait_ns)),
                            format_ns(t.collectives ? uint64_t(t.wait_ns) / t.collectives : 0),
                            std::to_string(t.arrived_last), format_ns(uint64_t(t.caused_wait_ns))});
      if (t.caused_wait_ns > 0 && (straggler == nullptr || t.caused_wait_ns > straggler->second.caused_wait_ns))
        straggler = &entry;
    }
    if (straggler != nullptr) {
      uint64_t shared = 0;
      for (const auto& instance : analysis_.instances()) shared += instance.arrivals.size() > 1;
      table.notes.push_back("straggler: rank " + std::to_string(straggler->first) + " (arrived last at " +
                            std::to_string(straggler->second.arrived_last) + " of " + std::to_string(shared) +
                            " collectives; the other ranks waited " +
                            format_ns(uint64_t(straggler->second.caused_wait_ns)) + " ns for it)");
    } else {
      table.notes.push_back("straggler: none (no collective was seen on more than one rank)");
    }
    table.notes.push_back("wait: last arrival - this rank's arrival, per collective (arrival: when the rank's "
                          "stream reached the collective)");
    return table;
  }

 private:
  CollectiveAnalysis analysis_;
};

}  // namespace

std::unique_ptr<StatsSection> make_nccl_rank_summary() { return std::make_unique<NcclRankSummary>(); }

}  // namespace proflaunch::tools::stats
