// The terminal report of `proftrace memory`: per memory space its peaks and
// what was live at the peak, steady-state churn, leaks at exit, and every
// failed allocation with the state at that moment.
#include "tools/proftrace/record_text.h"
#include "tools/proftrace/memory/report_writers.h"

#include <algorithm>
#include <cinttypes>

#include "tools/proftrace/memory/memory_analysis.h"
#include "tools/proftrace/memory/text_format.h"

namespace proflaunch::tools::memory {

namespace {

std::string who(const AllocationView& a) {
  std::string text = a.api + ", thread " + std::to_string(a.tid);
  if (!a.thread.empty()) text += " (" + a.thread + ")";
  return text;
}

// A block's stack under its line, one frame per line, indented; or "-".
std::string stack_text(const AllocationView& a) {
  if (!a.stack) return "-";
  std::string text = "(root first):";
  size_t begin = 0;
  while (begin <= a.stack->size()) {
    size_t end = a.stack->find('\n', begin);
    if (end == std::string::npos) end = a.stack->size();
    if (end > begin) text += "\n          " + a.stack->substr(begin, end - begin);
    begin = end + 1;
  }
  return text;
}

void print_block(std::FILE* out, const AllocationView& a, uint64_t at_ns, uint64_t base_ns) {
  const std::string stack = stack_text(a);
  std::fprintf(out, "    %10s  %-16s %s, allocated at %s (age %s), stack %s\n", human_bytes(a.bytes).c_str(),
               allocation_kind_name(a.kind).c_str(), who(a).c_str(), seconds_since(a.time_ns, base_ns).c_str(),
               human_duration(at_ns - std::min(at_ns, a.time_ns)).c_str(), stack.c_str());
}

// A rate in bytes that a damaged trace can push past 2^64 (huge sizes over a
// tiny window): converting such a double to an integer is undefined.
uint64_t saturated_bytes(double bytes) {
  if (!(bytes > 0)) return 0;
  return bytes >= 18446744073709551615.0 ? UINT64_MAX : static_cast<uint64_t>(bytes);
}

void print_space(std::FILE* out, const SpaceReport& space, uint64_t base_ns, size_t top) {
  std::fprintf(out, "\n%s of pid %u (%s):\n", space_label(space).c_str(), space.pid, space.process.c_str());
  const Peak& peak = space.is_host() ? space.peak_pinned : space.peak_allocated;
  if (space.is_host()) {
    std::fprintf(out, "  peak pinned %s at %s\n", human_bytes(peak.bytes).c_str(),
                 seconds_since(peak.time_ns, base_ns).c_str());
  } else {
    std::fprintf(out, "  peak allocated %s at %s; peak reserved %s at %s", human_bytes(peak.bytes).c_str(),
                 seconds_since(peak.time_ns, base_ns).c_str(), human_bytes(space.peak_reserved.bytes).c_str(),
                 seconds_since(space.peak_reserved.time_ns, base_ns).c_str());
    if (space.peak_managed.bytes > 0)
      std::fprintf(out, "; peak managed %s at %s", human_bytes(space.peak_managed.bytes).c_str(),
                   seconds_since(space.peak_managed.time_ns, base_ns).c_str());
    std::fprintf(out, "\n");
  }
  if (peak.bytes > 0) {
    std::fprintf(out, "  live at the peak: %s blocks; the largest:\n", grouped(space.live_at_peak_count).c_str());
    size_t shown = 0;
    uint64_t rest_bytes = space.live_at_peak_unlisted_bytes;
    for (const AllocationView& a : space.live_at_peak) {
      if (shown++ < top) print_block(out, a, peak.time_ns, base_ns);
      else rest_bytes += a.bytes;
    }
    if (space.live_at_peak_count > top)
      std::fprintf(out, "    ... and %s more (%s)\n", grouped(space.live_at_peak_count - top).c_str(),
                   human_bytes(rest_bytes).c_str());
  }
  std::fprintf(out, "  %s allocations, %s frees, %s failed\n", grouped(space.allocations).c_str(),
               grouped(space.frees).c_str(), grouped(space.failures).c_str());
  const Churn& churn = space.churn;
  if (churn.window_end_ns > churn.window_begin_ns)
    std::fprintf(out, "  churn in steady state (%s to %s): %.0f allocations/s, %.0f frees/s, %s/s allocated\n",
                 seconds_since(churn.window_begin_ns, base_ns).c_str(),
                 seconds_since(churn.window_end_ns, base_ns).c_str(), churn.allocations_per_s(), churn.frees_per_s(),
                 human_bytes(saturated_bytes(churn.allocated_bytes_per_s())).c_str());
  if (space.leaked_blocks > 0)
    std::fprintf(out, "  never freed by exit: %s blocks, %s\n", grouped(space.leaked_blocks).c_str(),
                 human_bytes(space.leaked_bytes).c_str());
}

}  // namespace

std::string space_label(const SpaceReport& space) {
  if (space.is_host()) return "Pinned host memory";
  std::string label = space.key.device >= 0 ? device_label(space.key.device) : "GPU ? (no context)";
  if (!space.device_name.empty() || space.device_total_bytes > 0) {
    label += " (" + space.device_name;
    if (space.device_total_bytes > 0)
      label += (space.device_name.empty() ? "" : ", ") + human_bytes(space.device_total_bytes);
    label += ")";
  }
  return label;
}

std::string failure_sentence(const FailureReport& failure, uint32_t pid, uint64_t base_ns) {
  std::string text = failure.result == 2 ? "out of memory" : "failed allocation (" + cuda_result_name(failure.result) + ")";
  text += " at " + seconds_since(failure.time_ns, base_ns) + " on ";
  text += failure.space.device == kHostSpace ? std::string("the host") : "device " + std::to_string(failure.space.device);
  text += " (pid " + std::to_string(pid) + ", " + failure.api + ", thread " + std::to_string(failure.tid) + ")";
  text += ": requested " + human_bytes(failure.requested_bytes) + " with ";
  if (failure.space.device == kHostSpace) {
    text += human_bytes(failure.totals.pinned()) + " pinned in " + grouped(failure.totals.live_blocks) + " blocks";
  } else {
    text += human_bytes(failure.totals.allocated()) + " allocated in " + grouped(failure.totals.live_blocks) +
            " blocks (" + human_bytes(failure.totals.reserved()) + " reserved)";
  }
  if (!failure.largest.empty()) {
    text += "; largest live blocks: ";
    for (size_t i = 0; i < failure.largest.size(); ++i) {
      const AllocationView& a = failure.largest[i];
      if (i > 0) text += ", ";
      text += human_bytes(a.bytes) + " (" + a.api + ", " + human_duration(failure.time_ns - std::min(failure.time_ns, a.time_ns)) + " old)";
    }
  }
  return text;
}

void write_text_report(const MemoryReport& report, const std::string& title, const TextOptions& options,
                       std::FILE* out) {
  const StateCounters& c = report.counters;
  std::fprintf(out, "Memory of %s: %zu memory spaces; %s allocations, %s frees, %s failed allocations\n",
               title.c_str(), report.spaces.size(), grouped(c.allocations).c_str(), grouped(c.frees).c_str(),
               grouped(c.failed_acquires).c_str());
  if (report.spaces.empty())
    std::fprintf(out, "No allocation was recorded (was the memory domain traced? see proflaunch --trace).\n");
  for (const SpaceReport& space : report.spaces) print_space(out, space, report.base_ns, options.top);

  if (!report.failures.empty()) {
    std::fprintf(out, "\nFailed allocations (%zu):\n", report.failures.size());
    for (const FailureReport& failure : report.failures) {
      uint32_t pid = 0;
      for (const SpaceReport& space : report.spaces)
        if (space.key.section_id == failure.space.section_id) pid = space.pid;
      std::fprintf(out, "  %s\n", failure_sentence(failure, pid, report.base_ns).c_str());
    }
  }

  if (!report.leaks.empty()) {
    uint64_t blocks = 0, bytes = 0;
    for (const SpaceReport& space : report.spaces) {
      blocks += space.leaked_blocks;
      bytes += space.leaked_bytes;
    }
    std::fprintf(out, "\nNever freed by exit (%s blocks, %s); the largest:\n", grouped(blocks).c_str(),
                 human_bytes(bytes).c_str());
    size_t shown = 0;
    for (const AllocationView& a : report.leaks) {
      if (shown++ >= options.top) break;
      const std::string where =
          a.space.device == kHostSpace ? std::string("host") : "device " + std::to_string(a.space.device);
      const std::string stack = stack_text(a);
      std::fprintf(out, "    %10s  %-16s %s, %s, allocated at %s, stack %s\n", human_bytes(a.bytes).c_str(),
                   allocation_kind_name(a.kind).c_str(), where.c_str(), who(a).c_str(),
                   seconds_since(a.time_ns, report.base_ns).c_str(), stack.c_str());
    }
  }

  if (c.unknown_frees > 0)
    std::fprintf(out, "\nnote: %s frees of addresses never seen allocated (allocated before tracing, or lost)\n",
                 grouped(c.unknown_frees).c_str());
  if (report.lost_records > 0)
    std::fprintf(out, "warning: %s records were lost while tracing; allocations among them are missing\n",
                 grouped(report.lost_records).c_str());
  if (report.late_events > 0)
    std::fprintf(out, "note: %s events arrived far out of time order and were applied late\n",
                 grouped(report.late_events).c_str());
}

}  // namespace proflaunch::tools::memory
