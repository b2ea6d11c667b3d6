// GPU idle gaps for `recommendations`' gpu-idle-gap rule: stretches of at
// least kIdleGapMinNs on one device (per process) with no GPU work between
// two pieces of work, each with what the thread that launched the work
// after the gap was doing meanwhile: the API call it spent most of the gap
// in, or, when it spent more of it outside any call (CPU work in the
// program), the calls just before and after that stretch.
//
// Streaming: GPU activities wait in a bounded min-heap and are swept in
// start order per device (a late one that reaches back before the sweep
// is counted: a gap it falls in may be overstated). The launching thread
// of an activity comes from its correlation id, kept for the last
// kLauncherWindow calls. Per thread, a ring of its notable host activity
// (calls and call-free stretches of at least kNotableHostNs, with the calls'
// stacks) reaching back kThreadHistory entries, for at most
// kMaxHistoryThreads threads: a gap found after its thread's ring moved on
// says so instead of guessing. Gaps are kept (a few numbers each) up to
// kMaxIdleGaps; the steps that judge them are known only at the end.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <queue>
#include <unordered_map>
#include <vector>

#include "tools/proftrace/interpret/events.h"
#include "tools/proftrace/stats/stack_joins.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools::stats {

inline constexpr uint64_t kIdleGapMinNs = 1'000'000;  // also launch-bound's largest gap: the two do not overlap
inline constexpr uint64_t kNotableHostNs = 100'000;   // a tenth of the smallest gap
inline constexpr size_t kThreadHistory = 2048;
inline constexpr size_t kMaxHistoryThreads = 256;
// Smaller than the overview's (65,536): a gap is explained when it leaves the
// heap, and the launching thread's ring must still reach back to it.
inline constexpr size_t kIdleGapReorderWindow = size_t{1} << 14;
inline constexpr size_t kMaxIdleGaps = size_t{1} << 20;
inline constexpr size_t kLauncherWindow = size_t{1} << 17;

// One host API call: which API, and its stacks (site.section is always set;
// native and python are 0 without a CallStack).
struct HostCall {
  uint16_t api = 0;
  StackKey site;
};

struct GapExplanation {
  enum class Kind : uint8_t {
    kInCall,        // the thread was in `call` for `ns` of the gap
    kOutsideCalls,  // the thread was in no API call for `ns`, after `call` and before `next`
    kShortCalls,    // only calls and pauses shorter than kNotableHostNs
    kNoThread,      // the launch of the work after the gap is not in the trace (or out of the window)
    kHistoryLost,   // the thread's activity then was no longer kept (or the thread was past the cap)
  };
  Kind kind = Kind::kNoThread;
  uint32_t tid = 0;
  HostCall call, next;
  uint64_t ns = 0;
};

struct IdleGap {
  uint64_t section;
  int32_t device;
  uint64_t begin_ns, end_ns;
  GapExplanation why;
};

class GpuIdleGaps : public interpret::Consumer {
 public:
  explicit GpuIdleGaps(size_t reorder_window = kIdleGapReorderWindow) : window_(reorder_window) {}

  void on_any_call(const interpret::Call& call) override;
  void on_gpu_work_read(const interpret::GpuWork& work) override;
  // End of input: sweeps the heap.
  void finish();

  // In the order found (per device in time order).
  const std::vector<IdleGap>& gaps() const { return gaps_; }
  uint64_t gaps_over_cap() const { return over_cap_; }
  uint64_t late_activities() const { return late_; }

 private:
  using ThreadKey = std::pair<uint64_t, uint32_t>;  // (section, tid)
  struct Call {
    uint64_t begin_ns, end_ns, correlation;
    HostCall host;
  };
  struct Notable {
    uint64_t begin_ns, end_ns;
    bool stretch;     // a call-free stretch (call: before it, next: after it); else a call
    HostCall call, next;
  };
  struct Thread {
    bool has_last = false;
    uint64_t last_end_ns = 0;
    HostCall last_call;
    std::deque<Notable> history;
    uint64_t history_from_ns = 0;  // activity before this was dropped from the ring
  };
  struct Activity {
    uint64_t start_ns, end_ns, section, correlation;
    int32_t device;
    bool operator>(const Activity& other) const { return start_ns > other.start_ns; }
  };
  struct Device {
    bool seen = false;
    uint64_t busy_until_ns = 0;
  };

  Thread* thread(const ThreadKey& key);
  void commit(Thread& t, const Call& call);
  void sweep(const Activity& activity);
  GapExplanation explain(uint64_t section, uint64_t correlation, uint64_t begin_ns, uint64_t end_ns) const;

  size_t window_;
  std::map<ThreadKey, Thread> threads_;
  std::unordered_map<Correlation, uint32_t, CorrelationHash> launcher_;  // correlation -> tid
  std::deque<Correlation> launcher_order_;
  std::priority_queue<Activity, std::vector<Activity>, std::greater<Activity>> waiting_;
  uint64_t swept_ns_ = 0;
  std::map<std::pair<uint64_t, int32_t>, Device> devices_;
  std::vector<IdleGap> gaps_;
  uint64_t over_cap_ = 0;
  uint64_t late_ = 0;
};

}  // namespace proflaunch::tools::stats
