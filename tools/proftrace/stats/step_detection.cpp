#include "tools/proftrace/stats/step_detection.h"

#include <algorithm>
#include <cstring>

#include "preload/capture/capture_spec.h"
#include "tools/proftrace/record_text.h"
#include "tools/proftrace/interpret/nvtx_ranges.h"

namespace proflaunch::tools::stats {

using namespace format;

namespace {
// Top-level (or --step-range) ranges kept as step candidates, over all
// threads and names: past this, further ranges are not stored (a note says so).
constexpr size_t kMaxStoredRanges = size_t{1} << 21;
constexpr size_t kMaxSequenceThreads = 64;
constexpr size_t kMinNvtxSteps = 3;
}  // namespace

size_t StepDetector::max_stored_ranges() { return kMaxStoredRanges; }

StepDetector::StepDetector(const std::string& step_range) {
  if (step_range.empty()) return;
  CaptureSpec spec;
  CaptureOptions capture;
  capture.steps = "0:0:1";
  capture.step_range = step_range.c_str();
  char error[512];
  if (parse_capture_options(capture, spec, error, sizeof error) && spec.step_source == StepSource::kNvtx) {
    step_name_ = spec.name;
    step_domain_ = spec.domain;
  }
}

void StepDetector::on_any_call(const interpret::Call& call) { span_.on_any_call(call); }

void StepDetector::on_operation_read(const interpret::Operation& op) {
  const ThreadKey thread{op.section->id, op.tid};
  if (launched(op.span(), thread) && op.kind == interpret::OperationKind::kKernel)
    add_kernel(thread, op.launch.function, op.launch.span.begin_ns);
}

void StepDetector::on_gpu_work_read(const interpret::GpuWork& work) { span_.on_gpu_work_read(work); }

// A call that put work on a GPU: counts for its thread.
bool StepDetector::launched(const ApiSpan& span, const ThreadKey& thread) {
  if (span.result != 0 || (span.flags & kApiCaptured)) return false;
  ++launches_[thread];
  return true;
}

void StepDetector::add_kernel(const ThreadKey& thread, uint64_t function, uint64_t begin_ns) {
  auto it = sequences_.find(thread);
  if (it == sequences_.end()) {
    if (sequences_.size() >= kMaxSequenceThreads) return;
    it = sequences_.emplace(thread, KernelSequence{}).first;
  }
  KernelSequence& seq = it->second;
  if (seq.kernels.size() < kPeriodicityPrefix) {
    seq.kernels.push_back(function);
    seq.begins_ns.push_back(begin_ns);
    if (seq.kernels.size() == kPeriodicityPrefix) {
      seq.checked = true;
      seq.found = find_periodicity(seq.kernels);
    }
  } else if (seq.found && function == seq.found->first_kernel) {
    seq.later_cuts_ns.push_back(begin_ns);
  }
}

void StepDetector::on_nvtx(const interpret::NvtxEvent& e) {
  const NvtxEventRecord& event = e.record;
  const auto key = std::make_tuple(e.section->id, e.tid, event.domain);
  if (event.type == static_cast<uint8_t>(NvtxEventType::kPush)) {
    const interpret::RangeName range = interpret::range_name(*e.section->model, event, e.inline_message);
    const bool wanted = step_name_.empty() || (range.name == step_name_ && range.domain == step_domain_);
    open_[key].push_back(
        OpenRange{event.span.end_ns, wanted ? range.label() : std::string(), launches_[{e.section->id, e.tid}]});
  } else if (event.type == static_cast<uint8_t>(NvtxEventType::kPop)) {
    auto it = open_.find(key);
    if (it == open_.end() || it->second.empty()) return;
    const OpenRange open = it->second.back();
    it->second.pop_back();
    // --step-range: its ranges at any depth; else the top-level ones that
    // launched GPU work (a frequent range around host code, such as a
    // module's own bookkeeping, is not a training step; HTA found no GPU
    // work in such steps).
    const bool launched_work = launches_[{e.section->id, e.tid}] > open.launches_at_push;
    const bool candidate =
        !open.label.empty() && (!step_name_.empty() || (it->second.empty() && launched_work));
    if (!candidate) return;
    if (stored_ranges_ >= kMaxStoredRanges) {
      ++dropped_ranges_;
      return;
    }
    ++stored_ranges_;
    ranges_[{e.section->id, e.tid}][open.label].push_back(
        Step{open.begin_ns, std::max(open.begin_ns, event.span.begin_ns)});
  }
}

std::vector<Step> StepDetector::find_steps(std::string* method) {
  std::optional<ThreadKey> busiest;
  for (const auto& [thread, count] : launches_)
    if (!busiest || count > launches_[*busiest]) busiest = thread;

  if (!step_name_.empty()) {
    // --step-range: its ranges on the thread that has the most of them.
    const std::vector<Step>* best = nullptr;
    for (const auto& [thread, by_label] : ranges_)
      for (const auto& [label, steps] : by_label)
        if (best == nullptr || steps.size() > best->size()) {
          best = &steps;
          origin_ = StepOrigin{thread.first, thread.second, "step-range"};
        }
    const std::string wanted = step_domain_.empty() ? step_name_ : step_name_ + "@" + step_domain_;
    if (best != nullptr) {
      *method = "steps: NVTX range '" + wanted + "' (--step-range), " + std::to_string(best->size()) + " times";
      return *best;
    }
    *method = "steps: no NVTX push/pop range '" + wanted + "' was found (--step-range): the whole run is one step";
    return {};
  }

  if (busiest) {
    auto thread = ranges_.find(*busiest);
    if (thread != ranges_.end()) {
      const std::pair<const std::string, std::vector<Step>>* best = nullptr;
      for (const auto& entry : thread->second)
        if (best == nullptr || entry.second.size() > best->second.size()) best = &entry;
      if (best != nullptr && best->second.size() >= kMinNvtxSteps) {
        origin_ = StepOrigin{busiest->first, busiest->second, "nvtx"};
        *method = "steps: NVTX range '" + best->first + "', the most frequent top-level range on the thread that "
                  "launched the most GPU work (" + std::to_string(best->second.size()) + " times)";
        return best->second;
      }
    }
    auto seq = sequences_.find(*busiest);
    if (seq != sequences_.end()) {
      KernelSequence& s = seq->second;
      if (!s.checked) s.found = find_periodicity(s.kernels);
      if (s.found) {
        std::vector<uint64_t> cuts;
        for (size_t i = 0; i < s.kernels.size(); ++i)
          if (s.kernels[i] == s.found->first_kernel) cuts.push_back(s.begins_ns[i]);
        cuts.insert(cuts.end(), s.later_cuts_ns.begin(), s.later_cuts_ns.end());
        origin_ = StepOrigin{busiest->first, busiest->second, "periodicity"};
        std::vector<Step> steps;
        for (size_t i = 0; i < cuts.size(); ++i)
          steps.push_back(Step{cuts[i], i + 1 < cuts.size() ? cuts[i + 1] : std::max(cuts[i], last_ns())});
        *method = "steps: periodicity: the kernel sequence of the thread that launched the most GPU work repeats "
                  "every " + std::to_string(s.found->period) + " launches; a step begins at each launch of its "
                  "first kernel (the last step ends with the trace; found in the first " +
                  std::to_string(kPeriodicityPrefix) + " launches)";
        return steps;
      }
    }
  }
  *method = "steps: no NVTX range occurs " + std::to_string(kMinNvtxSteps) +
            " times at the top level of the busiest launching thread, and its kernel sequence is not periodic: "
            "the whole run is one step";
  return {};
}

}  // namespace proflaunch::tools::stats
