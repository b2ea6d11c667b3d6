// The gpu-idle-gap rule of `recommendations`: the gaps gpu_idle_gaps.h found,
// judged against their steps, with what the launching thread did meanwhile.
#include <algorithm>
#include <map>
#include <set>

#include "tools/proftrace/stats/gpu_idle_gaps.h"
#include "tools/proftrace/stats/recommendation_finding.h"
#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {
namespace {

using Kind = GapExplanation::Kind;

std::string call_text(const TraceModel& model, StackFormatter& formatter, const HostCall& call) {
  const SectionModel* section = model.find(call.site.section);
  const std::string api = section != nullptr ? section->api_name(call.api) : std::string("an API call");
  return api + " at " + site_text(model, formatter, call.site);
}

// Where the time went, without durations: the key the Call Sites column groups by.
std::string where(const TraceModel& model, StackFormatter& formatter, const GapExplanation& why) {
  switch (why.kind) {
    case Kind::kInCall: return "in " + call_text(model, formatter, why.call);
    case Kind::kOutsideCalls:
      return "outside API calls after " + call_text(model, formatter, why.call) + ", before " +
             call_text(model, formatter, why.next);
    case Kind::kShortCalls: return "only calls and pauses under " + std::to_string(kNotableHostNs / 1000) + " us";
    case Kind::kNoThread: return "launching thread unknown";
    case Kind::kHistoryLost: break;
  }
  return "launching thread's calls no longer kept";
}

std::string explanation(const TraceModel& model, StackFormatter& formatter, const GapExplanation& why) {
  const std::string thread = "the launching thread (tid " + std::to_string(why.tid) + ")";
  switch (why.kind) {
    case Kind::kInCall:
      return thread + " was in " + call_text(model, formatter, why.call) + " for " + ms(why.ns) + " of it";
    case Kind::kOutsideCalls:
      return thread + " was outside API calls for " + ms(why.ns) + " of it (CPU work in the program), after " +
             call_text(model, formatter, why.call) + " and before " + call_text(model, formatter, why.next);
    case Kind::kShortCalls:
      return thread + " made only calls and pauses shorter than " + std::to_string(kNotableHostNs / 1000) +
             " us in it";
    case Kind::kNoThread: return "the launch of the work after it is not in the trace: the thread is unknown";
    case Kind::kHistoryLost: break;
  }
  return thread + "'s calls of that time were no longer kept (more than " + std::to_string(kThreadHistory) +
         " long calls and pauses since, or more than " + std::to_string(kMaxHistoryThreads) + " threads)";
}

}  // namespace

Finding idle_gaps(const GpuIdleGaps& gaps, const std::vector<Step>& steps, uint64_t first_ns, uint64_t last_ns,
                  const TraceModel& model, StackFormatter& formatter) {
  Finding f;
  const std::vector<Step> windows = steps.empty() ? std::vector<Step>{{first_ns, last_ns}} : steps;
  struct Site {
    uint64_t gaps = 0, idle_ns = 0;
  };
  std::map<std::string, Site> by_where;
  std::set<size_t> steps_with_gaps;
  const IdleGap* longest = nullptr;
  uint64_t longest_ns = 0, shorter = 0;
  size_t longest_step = 0;
  for (const IdleGap& gap : gaps.gaps()) {
    // A gap that crosses step edges is judged in each step, on its part there.
    auto step = std::upper_bound(windows.begin(), windows.end(), gap.begin_ns,
                                 [](uint64_t t, const Step& s) { return t < s.begin_ns; });
    if (step != windows.begin()) --step;
    for (; step != windows.end() && step->begin_ns < gap.end_ns; ++step) {
      const uint64_t begin = std::max(gap.begin_ns, step->begin_ns), end = std::min(gap.end_ns, step->end_ns);
      if (end <= begin) continue;
      const uint64_t part = end - begin;
      if (part < kIdleGapMinNs || double(part) < kIdleGapStepShare * double(step->end_ns - step->begin_ns)) {
        ++shorter;
        continue;
      }
      ++f.totals.count;
      f.totals.gpu_ns += part;
      steps_with_gaps.insert(size_t(step - windows.begin()));
      Site& site = by_where[where(model, formatter, gap.why)];
      ++site.gaps;
      site.idle_ns += part;
      if (part > longest_ns) longest = &gap, longest_ns = part, longest_step = size_t(step - windows.begin());
    }
  }
  if (!steps.empty()) f.steps = std::to_string(steps_with_gaps.size()) + "/" + std::to_string(steps.size());
  const std::string of_what = steps.empty() ? "of the analysed time" : "of its step";
  f.found = f.totals.count > 0;
  if (!f.found) {
    f.text = "no gap without GPU work of at least " + ms(kIdleGapMinNs) + " and " +
             format_percent(kIdleGapStepShare) + "% " + of_what + " (" + std::to_string(gaps.gaps().size()) +
             " gaps of at least " + ms(kIdleGapMinNs) + " in the run)";
    return f;
  }
  uint64_t windows_ns = 0;
  for (const Step& s : windows) windows_ns += s.end_ns - s.begin_ns;
  const SectionModel* section = model.find(longest->section);
  f.text = std::to_string(f.totals.count) + (f.totals.count == 1 ? " gap" : " gaps") +
           " of at least " + ms(kIdleGapMinNs) + " and " + format_percent(kIdleGapStepShare) + "% " + of_what +
           " with no GPU work on a device, " + ms(f.totals.gpu_ns) + " in all (" +
           format_percent(windows_ns > 0 ? double(f.totals.gpu_ns) / double(windows_ns) : 0) + "% of " +
           (steps.empty() ? "the analysed time" : "the steps' time") + "); the longest, " + ms(longest_ns) +
           (steps.empty() ? "" : " in step " + std::to_string(longest_step + 1)) + " on device " +
           std::to_string(longest->device) + " of pid " + std::to_string(section ? section->pid() : 0) + ": " +
           explanation(model, formatter, longest->why) +
           ". Keep the GPU fed: move that CPU work off the launching thread or overlap it with GPU work "
           "(DataLoader workers, prefetching, pinned non_blocking copies), and avoid blocking calls in the loop";
  std::vector<std::pair<std::string, Site>> sorted(by_where.begin(), by_where.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.idle_ns > b.second.idle_ns; });
  for (size_t i = 0; i < sorted.size() && i < kSitesShown; ++i)
    f.call_sites += (f.call_sites.empty() ? "" : " | ") + sorted[i].first + " (" +
                    std::to_string(sorted[i].second.gaps) + (sorted[i].second.gaps == 1 ? " gap, " : " gaps, ") +
                    std::to_string(sorted[i].second.idle_ns) + " ns idle)";
  if (sorted.size() > kSitesShown) f.call_sites += " | " + std::to_string(sorted.size() - kSitesShown) + " more";
  return f;
}

}  // namespace proflaunch::tools::stats
