// NVTX ranges as they open and close from the pass's NVTX events: push/pop
// per thread and domain, start/end by range id on any thread. For the nvtx
// and nvtx-gpu tables and the SQL export, so that they agree on what a range
// is. State: the open ranges only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "formats/records.h"
#include "tools/proftrace/interpret/events.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools::interpret {

// How a range is named: its domain ("" for the default domain; an unnamed
// domain as "domain <handle>") and its message ("(unnamed)" when it has none).
struct RangeName {
  std::string domain;
  std::string name;
  // "domain: name", or the name alone in the default domain.
  std::string label() const { return domain.empty() ? name : domain + ": " + name; }
};

inline RangeName range_name(const SectionModel& section, const format::NvtxEventRecord& record,
                            std::string_view inline_text) {
  RangeName range;
  range.name = section.nvtx_message(record, inline_text);
  if (range.name.empty()) range.name = "(unnamed)";
  range.domain = std::string(section.nvtx_domain_name(record.domain));
  if (range.domain.empty() && record.domain != 0) range.domain = "domain " + std::to_string(record.domain);
  return range;
}

// The ranges of a trace as they open and close: what both sections share.
class RangeTracker {
 public:
  struct Open {
    uint64_t id = 0;
    std::string label;
    uint64_t begin_ns = 0;
    uint32_t tid = 0;
    uint64_t end_ns = 0;  // a start range whose end was read first (another thread's)
    RangeName name;
    bool start_end = false;  // nvtxRangeStart/End, else push/pop
  };
  // Returns a range that closed (label, begin, end) through `closed`.
  template <typename Closed>
  void on_event(const NvtxEvent& e, Closed&& closed) {
    const format::NvtxEventRecord& event = e.record;
    const uint64_t s = e.section->id;
    const uint32_t tid = e.tid;
    switch (static_cast<format::NvtxEventType>(event.type)) {
      case format::NvtxEventType::kPush:
        pushed_[{s, tid, event.domain}].push_back(opened(e, false));
        break;
      case format::NvtxEventType::kPop: {
        auto it = pushed_.find({s, tid, event.domain});
        if (it == pushed_.end() || it->second.empty()) break;
        const Open open = it->second.back();
        it->second.pop_back();
        closed(open, event.span.begin_ns, s);
        break;
      }
      case format::NvtxEventType::kStart: {
        Open open = opened(e, true);
        // Records of different threads are not in time order in the file:
        // the end may have come first. The range then closes once its
        // thread's records pass its end (settle_started).
        if (auto early = ended_early_.find({s, event.range_id}); early != ended_early_.end()) {
          open.end_ns = std::max(early->second, open.begin_ns);
          ended_early_.erase(early);
        }
        started_[{s, event.range_id}] = open;
        break;
      }
      case format::NvtxEventType::kEnd: {
        auto it = started_.find({s, event.range_id});
        if (it == started_.end()) {
          ended_early_[{s, event.range_id}] = event.span.begin_ns;
          break;
        }
        // Ended, often on another thread: the starting thread's records up
        // to the end may still come (a later chunk), so the range stays
        // until they have (settle_started_on), or until the end of input.
        it->second.end_ns = std::max(event.span.begin_ns, it->second.begin_ns);
        break;
      }
      default: break;  // marks, synchronization objects
    }
  }
  // Ids of the ranges open at `at_ns` on `tid` of section `s` (pushed, or
  // started there).
  template <typename Visit>
  void open_on_thread(uint64_t s, uint32_t tid, uint64_t at_ns, Visit&& visit) const {
    for (auto it = pushed_.lower_bound({s, tid, 0}); it != pushed_.end() && std::get<0>(it->first) == s &&
                                                     std::get<1>(it->first) == tid;
         ++it)
      for (const Open& open : it->second) visit(open.id);
    for (const auto& [key, open] : started_)
      if (key.first == s && open.tid == tid && (open.end_ns == 0 || at_ns <= open.end_ns)) visit(open.id);
  }
  // Closes the start ranges whose end is known and before `before_ns` (all
  // of them with UINT64_MAX).
  template <typename Closed>
  void settle_started(uint64_t before_ns, Closed&& closed) {
    settle_where(closed, [&](const Open& open) { return open.end_ns < before_ns; });
  }
  // The same for the ranges started on `tid` of section `s`, whose records
  // have reached `at_ns`: each thread's records are in time order in the
  // file, but not those of different threads.
  template <typename Closed>
  void settle_started_on(uint64_t s, uint32_t tid, uint64_t at_ns, Closed&& closed) {
    settle_where(closed, [&](const Open& open) { return open.tid == tid && open.end_ns < at_ns; }, &s);
  }
  size_t still_open() const {
    size_t n = 0;
    for (const auto& [key, open] : started_) n += open.end_ns == 0;
    for (const auto& [key, stack] : pushed_) n += stack.size();
    return n;
  }

  // Every range still open (at the end of input: never ended), with its section.
  template <typename Visit>
  void for_each_open(Visit&& visit) const {
    for (const auto& [key, open] : started_)
      if (open.end_ns == 0) visit(open, key.first);
    for (const auto& [key, stack] : pushed_)
      for (const Open& open : stack) visit(open, std::get<0>(key));
  }

 private:
  Open opened(const NvtxEvent& e, bool start_end) {
    Open open;
    open.id = next_id_++;
    open.begin_ns = e.record.span.end_ns;
    open.tid = e.tid;
    open.name = range_name(*e.section->model, e.record, e.inline_message);
    open.label = open.name.label();
    open.start_end = start_end;
    return open;
  }

  template <typename Closed, typename Ripe>
  void settle_where(Closed& closed, Ripe&& ripe, const uint64_t* only_section = nullptr) {
    auto it = only_section != nullptr ? started_.lower_bound({*only_section, 0}) : started_.begin();
    while (it != started_.end() && (only_section == nullptr || it->first.first == *only_section)) {
      if (it->second.end_ns != 0 && ripe(it->second)) {
        const Open open = it->second;
        const uint64_t s = it->first.first;
        it = started_.erase(it);
        closed(open, open.end_ns, s);
      } else {
        ++it;
      }
    }
  }

  std::map<std::tuple<uint64_t, uint32_t, uint64_t>, std::vector<Open>> pushed_;
  std::map<std::pair<uint64_t, uint64_t>, Open> started_;
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> ended_early_;  // (section, range id) -> end
  uint64_t next_id_ = 1;
};

}  // namespace proflaunch::tools::interpret
