// Where the steps of a training loop are, found the way `overview` finds
// them (tools/README.md, "How steps are found"): --step-range's NVTX
// ranges; else the most frequent top-level push/pop range of the thread that
// launched the most GPU work; else the periodicity of that thread's kernel
// sequence; else none (the whole run is one step). Shared by `overview` and
// `recommendations`, so that both speak of the same steps.
//
// Streams with the sections; the steps are known only at the end, since
// "the busiest thread" is. Memory: per launching thread a launch count and
// at most kPeriodicityPrefix kernel handles (kMaxSequenceThreads threads);
// per open NVTX range its start; per step candidate its range (at most
// kMaxStoredRanges; a note counts the rest).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tools/proftrace/interpret/events.h"
#include "tools/proftrace/stats/analysed_span.h"
#include "tools/proftrace/stats/step_periodicity.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools::stats {

struct Step {
  uint64_t begin_ns, end_ns;
};

class StepDetector : public interpret::Consumer {
 public:
  // `step_range`: NAME[@DOMAIN] (proflaunch's --step-range spelling), or ""
  // to find the steps without being told.
  explicit StepDetector(const std::string& step_range = "");

  void on_any_call(const interpret::Call& call) override;
  void on_operation_read(const interpret::Operation& op) override;
  void on_gpu_work_read(const interpret::GpuWork& work) override;
  void on_nvtx(const interpret::NvtxEvent& e) override;

  // After the last record. Empty: no steps were found (the whole run is one
  // step). `method` says how they were found, for a note.
  std::vector<Step> find_steps(std::string* method);

  // After find_steps found steps: where they are and how they were found,
  // for outputs that place them (convert's ProfilerStep#N slices).
  struct StepOrigin {
    uint64_t section = 0;
    uint32_t tid = 0;
    const char* source = "";  // "step-range", "nvtx" or "periodicity"
  };
  const StepOrigin& origin() const { return origin_; }

  // The first and last event of the trace (API spans, GPU activities).
  uint64_t first_ns() const { return span_.first_ns(); }
  uint64_t last_ns() const { return span_.last_ns(); }
  // Step candidates past kMaxStoredRanges, not considered.
  uint64_t dropped_ranges() const { return dropped_ranges_; }
  static size_t max_stored_ranges();

 private:
  using ThreadKey = std::pair<uint64_t, uint32_t>;  // (section, tid)
  struct KernelSequence {
    std::vector<uint64_t> kernels;
    std::vector<uint64_t> begins_ns;
    std::optional<Periodicity> found;
    bool checked = false;
    std::vector<uint64_t> later_cuts_ns;
  };
  struct OpenRange {
    uint64_t begin_ns;
    std::string label;  // "" when not a step candidate (--step-range names another)
    uint64_t launches_at_push;  // the thread's launch count then: a step launches GPU work
  };

  bool launched(const format::ApiSpan& span, const ThreadKey& thread);
  void add_kernel(const ThreadKey& thread, uint64_t function, uint64_t begin_ns);

  std::string step_name_, step_domain_;
  AnalysedSpan span_;
  std::map<ThreadKey, uint64_t> launches_;
  std::map<ThreadKey, KernelSequence> sequences_;
  std::map<std::tuple<uint64_t, uint32_t, uint64_t>, std::vector<OpenRange>> open_;
  std::map<ThreadKey, std::map<std::string, std::vector<Step>>> ranges_;
  size_t stored_ranges_ = 0;
  uint64_t dropped_ranges_ = 0;
  StepOrigin origin_;
};

}  // namespace proflaunch::tools::stats
