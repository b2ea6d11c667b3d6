#include "tools/proftrace/stats/gpu_idle_gaps.h"

#include <algorithm>

namespace proflaunch::tools::stats {

using namespace format;

namespace {

uint64_t overlap(uint64_t a_begin, uint64_t a_end, uint64_t b_begin, uint64_t b_end) {
  const uint64_t begin = std::max(a_begin, b_begin), end = std::min(a_end, b_end);
  return end > begin ? end - begin : 0;
}

}  // namespace

GpuIdleGaps::Thread* GpuIdleGaps::thread(const ThreadKey& key) {
  auto it = threads_.find(key);
  if (it != threads_.end()) return &it->second;
  if (threads_.size() >= kMaxHistoryThreads) return nullptr;
  return &threads_[key];
}

void GpuIdleGaps::on_any_call(const interpret::Call& call) {
  // NVTX marks and ranges are the program's annotations, not work it waits for.
  if (call.kind == RecordKind::kNvtxEvent) return;
  const ApiSpan& span = call.span;
  if (span.flags & (kApiCarried | kApiNoDuration)) return;
  const uint64_t section = call.section->id;
  if (span.correlation_id != 0) {
    const Correlation c{section, span.correlation_id};
    if (launcher_.insert_or_assign(c, call.tid).second) launcher_order_.push_back(c);
    while (launcher_order_.size() > kLauncherWindow) {
      launcher_.erase(launcher_order_.front());
      launcher_order_.pop_front();
    }
  }
  Thread* t = thread(ThreadKey{section, call.tid});
  if (t == nullptr) return;
  commit(*t, Call{span.begin_ns, std::max(span.begin_ns, span.end_ns), span.correlation_id,
                  HostCall{span.api, StackKey{section, call.stacks.native, call.stacks.python}}});
}

void GpuIdleGaps::on_gpu_work_read(const interpret::GpuWork& work) {
  const GpuActivityRecord& activity = work.activity;
  if (activity.start_ns < swept_ns_) ++late_;
  waiting_.push(Activity{activity.start_ns, std::max(activity.start_ns, activity.end_ns), work.section->id,
                         activity.correlation_id, activity.device});
  while (waiting_.size() > window_) {
    sweep(waiting_.top());
    waiting_.pop();
  }
}

void GpuIdleGaps::commit(Thread& t, const Call& call) {
  auto remember = [&](const Notable& notable) {
    t.history.push_back(notable);
    if (t.history.size() > kThreadHistory) {
      t.history_from_ns = std::max(t.history_from_ns, t.history.front().end_ns);
      t.history.pop_front();
    }
  };
  if (t.has_last && call.begin_ns > t.last_end_ns && call.begin_ns - t.last_end_ns >= kNotableHostNs)
    remember(Notable{t.last_end_ns, call.begin_ns, true, t.last_call, call.host});
  if (call.end_ns - call.begin_ns >= kNotableHostNs) remember(Notable{call.begin_ns, call.end_ns, false, call.host, {}});
  // A call inside another (a runtime call's driver call) is written first;
  // the outer one, ending later, becomes the last.
  if (!t.has_last || call.end_ns >= t.last_end_ns) {
    t.last_end_ns = call.end_ns;
    t.last_call = call.host;
  }
  t.has_last = true;
}

void GpuIdleGaps::sweep(const Activity& activity) {
  swept_ns_ = std::max(swept_ns_, activity.start_ns);
  Device& device = devices_[{activity.section, activity.device}];
  if (device.seen && activity.start_ns > device.busy_until_ns &&
      activity.start_ns - device.busy_until_ns >= kIdleGapMinNs) {
    if (gaps_.size() < kMaxIdleGaps)
      gaps_.push_back(IdleGap{activity.section, activity.device, device.busy_until_ns, activity.start_ns,
                              explain(activity.section, activity.correlation, device.busy_until_ns,
                                      activity.start_ns)});
    else
      ++over_cap_;
  }
  device.busy_until_ns = device.seen ? std::max(device.busy_until_ns, activity.end_ns) : activity.end_ns;
  device.seen = true;
}

GapExplanation GpuIdleGaps::explain(uint64_t section, uint64_t correlation, uint64_t begin_ns,
                                    uint64_t end_ns) const {
  GapExplanation why;
  const auto launcher = launcher_.find(Correlation{section, correlation});
  if (launcher == launcher_.end()) return why;  // kNoThread
  why.tid = launcher->second;
  const auto it = threads_.find(ThreadKey{section, launcher->second});
  if (it == threads_.end() || begin_ns < it->second.history_from_ns) {
    why.kind = GapExplanation::Kind::kHistoryLost;
    return why;
  }
  const Thread& t = it->second;
  const Notable* best_call = nullptr;
  const Notable* best_stretch = nullptr;
  uint64_t call_ns = 0, stretch_ns = 0;
  auto consider = [&](const Notable& n) {
    const uint64_t ns = overlap(n.begin_ns, n.end_ns, begin_ns, end_ns);
    if (n.stretch && ns > stretch_ns) stretch_ns = ns, best_stretch = &n;
    if (!n.stretch && ns > call_ns) call_ns = ns, best_call = &n;
  };
  // Entries are pushed as calls return, so their ends (nearly) ascend: from
  // the newest back to the first that ended before the gap.
  for (auto n = t.history.rbegin(); n != t.history.rend() && n->end_ns > begin_ns; ++n) consider(*n);
  if (best_call == nullptr && best_stretch == nullptr) {
    why.kind = GapExplanation::Kind::kShortCalls;
    return why;
  }
  const bool in_call = call_ns >= stretch_ns;
  const Notable& n = in_call ? *best_call : *best_stretch;
  why.kind = in_call ? GapExplanation::Kind::kInCall : GapExplanation::Kind::kOutsideCalls;
  why.call = n.call;
  why.next = n.next;
  why.ns = in_call ? call_ns : stretch_ns;
  return why;
}

void GpuIdleGaps::finish() {
  for (; !waiting_.empty(); waiting_.pop()) sweep(waiting_.top());
}

}  // namespace proflaunch::tools::stats
