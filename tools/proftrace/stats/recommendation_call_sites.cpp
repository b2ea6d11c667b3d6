// What the rules of `recommendations` share: the step a time falls in, how
// times are written, and the `Call Sites` column.
#include <algorithm>
#include <map>
#include <tuple>

#include "tools/proftrace/stats/recommendation_finding.h"

namespace proflaunch::tools::stats {

long step_of(const std::vector<Step>& steps, uint64_t ns) {
  auto it = std::upper_bound(steps.begin(), steps.end(), ns,
                             [](uint64_t t, const Step& s) { return t < s.begin_ns; });
  if (it == steps.begin()) return -1;
  --it;
  return ns < it->end_ns ? long(it - steps.begin()) : -1;
}

std::string ms(uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", double(ns) / 1e6);
  return text;
}

std::vector<const Candidate*> all_of(const std::vector<Candidate>& candidates) {
  std::vector<const Candidate*> out;
  for (const Candidate& c : candidates) out.push_back(&c);
  return out;
}

std::string site_text(const TraceModel& model, StackFormatter& formatter, const StackKey& key) {
  if (key.native == 0 && key.python == 0) return "(no call stack)";
  if (const SectionModel* section = model.find(key.section)) {
    const std::string attributed = formatter.attribute(*section, key.native, key.python).text;
    if (!attributed.empty()) return attributed;
  }
  return "(no call stack)";
}

std::string call_sites(const TraceModel& model, StackFormatter& formatter, const std::vector<StackKey>& sites,
                       const std::vector<const Candidate*>& sited, bool gpu_side) {
  std::map<uint32_t, Totals> by_site;
  for (const Candidate* c : sited) by_site[c->site].add(*c);
  // Different stacks that end at the same line are one site.
  std::map<std::string, Totals> by_text;
  for (const auto& [site, totals] : by_site) {
    const std::string text = site != 0 ? site_text(model, formatter, sites[site]) : "(no call stack)";
    Totals& t = by_text[text];
    t.count += totals.count;
    t.bytes += totals.bytes;
    t.host_ns += totals.host_ns;
    t.gpu_ns += totals.gpu_ns;
  }
  std::vector<std::pair<std::string, Totals>> sorted(by_text.begin(), by_text.end());
  std::stable_sort(sorted.begin(), sorted.end(), [&](const auto& a, const auto& b) {
    const Totals &x = a.second, &y = b.second;
    return gpu_side ? std::tie(x.gpu_ns, x.count) > std::tie(y.gpu_ns, y.count)
                    : std::tie(x.count, x.host_ns) > std::tie(y.count, y.host_ns);
  });
  std::string out;
  for (size_t i = 0; i < sorted.size() && i < kSitesShown; ++i)
    out += (out.empty() ? "" : " | ") + sorted[i].first + " (" + std::to_string(sorted[i].second.count) +
           (gpu_side ? " launches, " + std::to_string(sorted[i].second.gpu_ns) + " ns GPU)"
                     : " calls, " + std::to_string(sorted[i].second.host_ns) + " ns)");
  if (sorted.size() > kSitesShown) out += " | " + std::to_string(sorted.size() - kSitesShown) + " more sites";
  return out;
}

}  // namespace proflaunch::tools::stats
