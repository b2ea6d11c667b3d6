// The gpu-idle-gap rule of `recommendations`: the gaps gpu_idle_gaps.h found,
// judged against their steps, with what the launching thread did meanwhile.
#include <algorithm>
#include <map>
#include <set>

#include "tools/proftrace/stats/cpu_activity.h"
#include "tools/proftrace/stats/cpu_profile.h"
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

// What each thread did in given stretches of time, from its CPU samples
// (count x period, by activity_site) and blocking calls (their overlap).
class GapActivity {
 public:
  using ThreadKey = CpuActivity::ThreadKey;
  struct Doings {
    std::map<std::string, uint64_t> ns;  // "blocked in ...", "in ..."
    uint64_t sampled_ns = 0, blocked_ns = 0;
  };

  GapActivity(const CpuActivity& cpu, const TraceModel& model, StackFormatter& formatter)
      : cpu_(cpu), builder_(model, formatter) {
    for (const auto& sample : cpu.samples()) samples_[{sample.section, sample.tid}].push_back(&sample);
    for (auto& [key, list] : samples_)
      std::stable_sort(list.begin(), list.end(), [](auto* a, auto* b) { return a->time_ns < b->time_ns; });
    for (const auto& wait : cpu.waits()) waits_[{wait.section, wait.tid}].push_back(&wait);
    for (auto& [key, list] : waits_)
      std::stable_sort(list.begin(), list.end(), [](auto* a, auto* b) { return a->begin_ns < b->begin_ns; });
  }

  void add(const ThreadKey& thread, uint64_t begin_ns, uint64_t end_ns, Doings& out) {
    if (auto s = samples_.find(thread); s != samples_.end()) {
      const uint64_t period = cpu_.period_ns(thread.first);
      auto it = std::lower_bound(s->second.begin(), s->second.end(), begin_ns,
                                 [](auto* sample, uint64_t t) { return sample->time_ns < t; });
      for (; it != s->second.end() && (*it)->time_ns < end_ns; ++it) {
        out.ns["in " + builder_.sample_site(**it)] += period * (*it)->periods;
        out.sampled_ns += period * (*it)->periods;
      }
    }
    if (auto w = waits_.find(thread); w != waits_.end()) {
      for (const CpuActivity::Wait* wait : w->second) {
        if (wait->begin_ns >= end_ns) break;
        const uint64_t b = std::max(wait->begin_ns, begin_ns), e = std::min(wait->end_ns, end_ns);
        if (e <= b) continue;
        out.ns["blocked in " + builder_.wait_site(*wait)] += e - b;
        out.blocked_ns += e - b;
      }
    }
  }
  // The other threads of `section` with samples or waits.
  std::vector<ThreadKey> threads_of(uint64_t section) const {
    std::set<ThreadKey> all;
    for (const auto& [key, list] : samples_)
      if (key.first == section) all.insert(key);
    for (const auto& [key, list] : waits_)
      if (key.first == section) all.insert(key);
    return {all.begin(), all.end()};
  }

 private:
  const CpuActivity& cpu_;
  ProfileBuilder builder_;
  std::map<ThreadKey, std::vector<const CpuActivity::Sample*>> samples_;
  std::map<ThreadKey, std::vector<const CpuActivity::Wait*>> waits_;
};

// "24.000 ms (77%) blocked in ..., 6.000 ms (19%) in ...": the largest
// `shown` of `doings`, in shares of `gap_ns`.
std::string doings_text(const GapActivity::Doings& doings, uint64_t gap_ns, size_t shown) {
  std::vector<std::pair<std::string, uint64_t>> sorted(doings.ns.begin(), doings.ns.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text;
  for (size_t i = 0; i < sorted.size() && i < shown; ++i)
    text += (i == 0 ? "" : ", ") + ms(sorted[i].second) + " (" +
            format_percent(gap_ns ? double(sorted[i].second) / double(gap_ns) : 0) + "%) " + sorted[i].first;
  if (sorted.size() > shown) text += ", and " + std::to_string(sorted.size() - shown) + " more";
  return text;
}

std::string thread_label(const TraceModel& model, const GapActivity::ThreadKey& thread) {
  const SectionModel* section = model.find(thread.first);
  const std::string name = section != nullptr ? std::string(section->thread_name(thread.second)) : "";
  return "tid " + std::to_string(thread.second) + (name.empty() ? "" : " \"" + name + "\"");
}

constexpr size_t kDoingsShown = 3;
constexpr size_t kOtherThreadsShown = 2;

// What the launching thread (`launcher`, 0: unknown) and the busiest other
// threads of `section` did in `stretches` (total `gap_ns`); "" when the
// samples and waits say nothing about them.
std::string cpu_explanation(GapActivity& activity, const TraceModel& model, uint64_t section, uint32_t launcher,
                            const std::vector<std::pair<uint64_t, uint64_t>>& stretches, uint64_t gap_ns) {
  std::string text;
  if (launcher != 0) {
    GapActivity::Doings doings;
    for (const auto& [b, e] : stretches) activity.add({section, launcher}, b, e, doings);
    if (!doings.ns.empty()) {
      const uint64_t known = doings.sampled_ns + doings.blocked_ns;
      text = "the launching thread spent " + doings_text(doings, gap_ns, kDoingsShown) +
             (known < gap_ns ? "; " + ms(gap_ns - known) + " (" + format_percent(double(gap_ns - known) / double(gap_ns)) +
                                   "%) neither sampled nor blocked (in API calls, or CPU time between samples)"
                             : "");
    }
  }
  std::vector<std::pair<uint64_t, std::pair<GapActivity::ThreadKey, GapActivity::Doings>>> others;
  for (const auto& thread : activity.threads_of(section)) {
    if (thread.second == launcher) continue;
    GapActivity::Doings doings;
    for (const auto& [b, e] : stretches) activity.add(thread, b, e, doings);
    if (doings.sampled_ns > 0) others.push_back({doings.sampled_ns, {thread, std::move(doings)}});
  }
  std::stable_sort(others.begin(), others.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; i < others.size() && i < kOtherThreadsShown; ++i) {
    GapActivity::Doings busy = others[i].second.second;
    std::erase_if(busy.ns, [](const auto& entry) { return entry.first.rfind("in ", 0) != 0; });  // its CPU work
    text += (text.empty() ? "" : "; ") + thread_label(model, others[i].second.first) + " ran " +
            doings_text(busy, gap_ns, 1);
  }
  return text;
}

}  // namespace

Finding idle_gaps(const GpuIdleGaps& gaps, const std::vector<Step>& steps, uint64_t first_ns, uint64_t last_ns,
                  const TraceModel& model, StackFormatter& formatter, const CpuActivity* cpu) {
  Finding f;
  std::vector<std::pair<uint64_t, uint64_t>> counted;  // the parts of gaps counted, for what the CPU did
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
      counted.emplace_back(begin, end);
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
           explanation(model, formatter, longest->why);
  if (cpu != nullptr) {
    GapActivity activity(*cpu, model, formatter);
    // The longest gap's part in its step.
    const uint64_t begin = steps.empty() ? longest->begin_ns : std::max(longest->begin_ns, windows[longest_step].begin_ns);
    const std::string in_longest = cpu_explanation(activity, model, longest->section, longest->why.tid,
                                                   {{begin, begin + longest_ns}}, longest_ns);
    if (!in_longest.empty()) f.text += ". In it, from CPU samples and blocking calls: " + in_longest;
    // All gaps of the launching thread's process, when there are several.
    if (f.totals.count > 1) {
      std::vector<std::pair<uint64_t, uint64_t>> same_process;
      uint64_t ns = 0;
      for (const IdleGap& gap : gaps.gaps()) {
        if (gap.section != longest->section) continue;
        for (const auto& [b, e] : counted)
          if (b >= gap.begin_ns && e <= gap.end_ns) same_process.emplace_back(b, e), ns += e - b;
      }
      std::sort(same_process.begin(), same_process.end());
      same_process.erase(std::unique(same_process.begin(), same_process.end()), same_process.end());
      ns = 0;
      for (const auto& [b, e] : same_process) ns += e - b;
      const std::string in_all =
          cpu_explanation(activity, model, longest->section, longest->why.tid, same_process, ns);
      if (!in_all.empty())
        f.text += ". In all " + std::to_string(same_process.size()) + " gaps of pid " +
                  std::to_string(section ? section->pid() : 0) + " (" + ms(ns) + "): " + in_all;
    }
  }
  f.text += ". Keep the GPU fed: move that CPU work off the launching thread or overlap it with GPU work "
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
