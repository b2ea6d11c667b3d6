#include "tools/proftrace/stats/cpu_page_data.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "tools/proftrace/json_writer.h"
#include "tools/proftrace/stacks/stack_formatter.h"
#include "tools/proftrace/stats/cpu_profile.h"

namespace proflaunch::tools::stats {

std::string CpuPageData::json(const TraceModel& model) {
  if (activity_.empty()) return "";
  StackFormatter formatter;
  ProfileBuilder builder(model, formatter);
  IdleTimes idle(gaps_, activity_);

  uint64_t first_ns = UINT64_MAX, last_ns = 0;
  for (const auto& s : activity_.samples()) first_ns = std::min(first_ns, s.time_ns), last_ns = std::max(last_ns, s.time_ns);
  for (const auto& w : activity_.waits()) first_ns = std::min(first_ns, w.begin_ns), last_ns = std::max(last_ns, w.end_ns);
  if (first_ns == UINT64_MAX) first_ns = 0;

  std::map<CpuActivity::ThreadKey, size_t> threads;
  std::vector<CpuActivity::ThreadKey> thread_list;
  auto thread_index = [&](const CpuActivity::ThreadKey& key) {
    auto [it, added] = threads.try_emplace(key, thread_list.size());
    if (added) thread_list.push_back(key);
    return it->second;
  };
  std::map<std::string, size_t> frame_ids;
  std::vector<std::pair<std::string, bool>> frames;  // text, python
  std::map<std::tuple<uint64_t, uint32_t, uint32_t>, std::pair<size_t, bool>> stack_ids;  // -> index, leaf is Python
  std::vector<std::vector<size_t>> stacks;
  auto stack_index = [&](uint64_t section_id, uint32_t native, uint32_t python) {
    auto [it, added] = stack_ids.try_emplace({section_id, native, python}, std::pair<size_t, bool>{0, false});
    if (!added) return it->second;
    std::vector<size_t> ids;
    bool leaf_python = false;
    if (const SectionModel* section = model.find(section_id)) {
      for (const auto& site : formatter.sites(*section, native, python)) {
        auto [f, new_frame] = frame_ids.try_emplace(site.text, frames.size());
        if (new_frame) frames.emplace_back(site.text, site.python);
        ids.push_back(f->second);
        leaf_python = site.python;
      }
    }
    it->second = {stacks.size(), leaf_python};
    stacks.push_back(std::move(ids));
    return it->second;
  };

  const size_t total = activity_.samples().size();
  const size_t stride = total > kMaxSamples ? (total + kMaxSamples - 1) / kMaxSamples : 1;
  std::string samples;
  size_t index = 0;
  for (const auto& s : activity_.samples()) {
    if (index++ % stride != 0) continue;
    const CpuActivity::ThreadKey key{s.section, s.tid};
    const size_t t = thread_index(key);
    const size_t stack = stack_index(s.section, s.native, s.python).first;
    samples += (samples.empty() ? "[[" : ",[") + std::to_string(t) + "," + std::to_string(s.time_ns - first_ns) + "," +
               std::to_string(stack) + "," + (idle.contains(key, s.time_ns) ? "1" : "0") + "," +
               std::to_string(s.periods) + "]";
  }
  std::string waits;
  for (const auto& w : activity_.waits()) {
    const CpuActivity::ThreadKey key{w.section, w.tid};
    const size_t t = thread_index(key);
    waits += (waits.empty() ? "[[" : ",[") + std::to_string(t) + "," + std::to_string(w.begin_ns - first_ns) + "," +
             std::to_string(w.end_ns - first_ns) + "," + json_quoted(builder.wait_site(w)) + "," +
             std::to_string(idle.overlap(key, w.begin_ns, w.end_ns)) + "]";
  }

  // Per process: its launching thread's idle GPU time, split.
  std::string split;
  std::map<uint64_t, bool> sections;
  for (const auto& key : thread_list) sections[key.first] = true;
  for (const auto& [section_id, unused] : sections) {
    const uint32_t launcher = activity_.launching_thread(section_id);
    if (launcher == 0) continue;
    const CpuActivity::ThreadKey key{section_id, launcher};
    uint64_t idle_ns = 0;
    for (const auto& [b, e] : idle.of(key)) idle_ns += e - b;
    if (idle_ns == 0) continue;
    uint64_t blocked = 0, python = 0, native = 0;
    for (const auto& w : activity_.waits())
      if (w.section == section_id && w.tid == launcher) blocked += idle.overlap(key, w.begin_ns, w.end_ns);
    const uint64_t period = activity_.period_ns(section_id);
    for (const auto& s : activity_.samples()) {
      if (s.section != section_id || s.tid != launcher || !idle.contains(key, s.time_ns)) continue;
      (stack_index(s.section, s.native, s.python).second ? python : native) += period * s.periods;
    }
    blocked = std::min(blocked, idle_ns);
    python = std::min(python, idle_ns - blocked);
    native = std::min(native, idle_ns - blocked - python);
    const SectionModel* section = model.find(section_id);
    split += std::string(split.empty() ? "" : ",") + "{\"pid\": " + std::to_string(section ? section->pid() : 0) +
             ", \"tid\": " + std::to_string(launcher) + ", \"idle_ns\": " + std::to_string(idle_ns) +
             ", \"blocked_ns\": " + std::to_string(blocked) + ", \"python_ns\": " + std::to_string(python) +
             ", \"native_ns\": " + std::to_string(native) +
             ", \"unaccounted_ns\": " + std::to_string(idle_ns - blocked - python - native) + "}";
  }

  std::string out = "{\"start_ns\": " + std::to_string(first_ns) + ", \"span_ns\": " +
                    std::to_string(last_ns > first_ns ? last_ns - first_ns : 0) +
                    ", \"min_idle_gap_ns\": " + std::to_string(kIdleGapMinNs) +
                    ", \"sample_weight\": " + std::to_string(stride) + ",\n\"threads\": [";
  for (size_t i = 0; i < thread_list.size(); ++i) {
    const auto& key = thread_list[i];
    const SectionModel* section = model.find(key.first);
    out += std::string(i ? "," : "") + "{\"pid\": " + std::to_string(section ? section->pid() : 0) +
           ", \"tid\": " + std::to_string(key.second) + ", \"name\": " +
           json_quoted(section ? std::string(section->thread_name(key.second)) : std::string()) +
           ", \"period_ns\": " + std::to_string(activity_.period_ns(key.first)) + ", \"launching\": " +
           (activity_.launching_thread(key.first) == key.second ? "true" : "false") + "}";
  }
  out += "],\n\"frames\": [";
  for (size_t i = 0; i < frames.size(); ++i) out += (i ? "," : "") + json_quoted(frames[i].first);
  out += "],\n\"python_frames\": [";
  for (size_t i = 0; i < frames.size(); ++i) out += std::string(i ? "," : "") + (frames[i].second ? "1" : "0");
  out += "],\n\"stacks\": [";
  for (size_t i = 0; i < stacks.size(); ++i) {
    out += i ? ",[" : "[";
    for (size_t j = 0; j < stacks[i].size(); ++j) out += (j ? "," : "") + std::to_string(stacks[i][j]);
    out += "]";
  }
  out += "],\n\"samples\": " + (samples.empty() ? std::string("[]") : samples + "]") +
         ",\n\"waits\": " + (waits.empty() ? std::string("[]") : waits + "]") +
         ",\n\"idle_split\": [" + split + "]}";
  return out;
}

}  // namespace proflaunch::tools::stats
