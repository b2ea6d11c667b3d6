#include "tools/proftrace/memory/memory_analysis.h"

#include <algorithm>
#include <map>

#include "tools/proftrace/memory/analysis_passes.h"
#include "tools/proftrace/record_text.h"
#include "tools/proftrace/stacks/stack_formatter.h"

namespace proflaunch::tools::memory {

using format::AllocationKind;

std::string cuda_result_name(int32_t result) {
  // The codes an allocation, free or mapping call documents (cuda.h).
  static const std::map<int32_t, const char*> kNames = {
      {0, "CUDA_SUCCESS"},
      {1, "CUDA_ERROR_INVALID_VALUE"},
      {2, "CUDA_ERROR_OUT_OF_MEMORY"},
      {3, "CUDA_ERROR_NOT_INITIALIZED"},
      {4, "CUDA_ERROR_DEINITIALIZED"},
      {100, "CUDA_ERROR_NO_DEVICE"},
      {101, "CUDA_ERROR_INVALID_DEVICE"},
      {201, "CUDA_ERROR_INVALID_CONTEXT"},
      {400, "CUDA_ERROR_INVALID_HANDLE"},
      {500, "CUDA_ERROR_NOT_FOUND"},
      {700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
      {712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"},
      {713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"},
      {801, "CUDA_ERROR_NOT_SUPPORTED"},
      {999, "CUDA_ERROR_UNKNOWN"},
  };
  auto found = kNames.find(result);
  return found != kNames.end() ? found->second : "CUresult " + std::to_string(result);
}

std::string allocation_kind_name(AllocationKind kind) {
  return tools::allocation_kind_name(static_cast<uint8_t>(kind));
}

namespace {

// Sections in display order, then devices, the host space last.
std::vector<SpaceKey> ordered_spaces(const std::map<SpaceKey, SpaceFacts>& facts, const TraceModel& model) {
  std::map<uint64_t, size_t> position;
  const auto ordered = model.ordered();
  for (size_t i = 0; i < ordered.size(); ++i) position[ordered[i]->section_id] = i;
  std::vector<SpaceKey> keys;
  for (const auto& [key, f] : facts) keys.push_back(key);
  auto rank = [&](const SpaceKey& key) {
    auto found = position.find(key.section_id);
    const size_t section = found != position.end() ? found->second : ordered.size();
    const int64_t device = key.device == kHostSpace ? INT64_MAX : key.device;
    return std::make_tuple(section, key.section_id, device);
  };
  std::sort(keys.begin(), keys.end(), [&](const SpaceKey& a, const SpaceKey& b) { return rank(a) < rank(b); });
  return keys;
}

SpaceReport space_report(const SpaceKey& key, const SpaceFacts& facts, SecondPass::SpaceResult& result,
                         const TraceModel& model, const AllocationNamer& namer) {
  SpaceReport space;
  space.key = key;
  if (const SectionModel* section = model.find(key.section_id)) {
    space.pid = section->pid();
    space.process = section->command_line();
    auto device = section->devices.find(key.device);
    if (device != section->devices.end()) {
      space.device_name = std::string(section->string(device->second.name_string));
      space.device_total_bytes = device->second.total_memory_bytes;
    }
  }
  space.first_ns = facts.first_ns;
  space.last_ns = facts.last_ns;
  space.events = facts.events;
  space.allocations = facts.allocations;
  space.frees = facts.frees;
  space.failures = facts.failures;
  space.peak_allocated = facts.allocated.peak;
  space.peak_reserved = facts.reserved.peak;
  space.peak_managed = facts.managed.peak;
  space.peak_pinned = facts.pinned.peak;
  space.at_end = facts.at_end;
  for (const Allocation& a : result.live_at_peak) space.live_at_peak.push_back(namer.view(a));
  space.live_at_peak_count = result.live_at_peak_count;
  space.live_at_peak_unlisted_bytes = result.live_at_peak_unlisted_bytes;
  space.timeline = std::move(result.timeline);
  space.churn = result.churn;
  space.leaked_blocks = facts.at_end.live_blocks;
  return space;
}

}  // namespace

MemoryReport analyze_memory(std::vector<InputTrace>& inputs, const TraceModel& model,
                            const AnalysisOptions& options) {
  MemoryReport report;
  bool any_section = false;
  for (const auto& [id, section] : model.sections()) {
    if (!section.process) continue;
    if (!any_section || section.process->monotonic_ns < report.base_ns) report.base_ns = section.process->monotonic_ns;
    any_section = true;
  }
  const AllocationNamer namer(model);

  // Pass 1.
  FirstPass first(namer);
  MemoryState first_state(&first);
  first.attach(&first_state);
  report.late_events = replay_events(inputs, model, first_state, options.order, &report.lost_records);
  first.finish();
  report.counters = first_state.counters();

  std::vector<Allocation> leaked;
  std::map<SpaceKey, uint64_t> leaked_bytes;
  for (const auto& entry : first.spaces()) {
    const SpaceKey& space = entry.first;  // not a structured binding: clang 14 cannot capture those
    first_state.for_each_live(space, [&](const Allocation& a) {
      leaked.push_back(a);
      leaked_bytes[space] += a.bytes;
    });
  }
  std::sort(leaked.begin(), leaked.end(), [](const Allocation& a, const Allocation& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.time_ns < b.time_ns;
  });
  if (leaked.size() > MemoryReport::kMaxListed) leaked.resize(MemoryReport::kMaxListed);
  for (const Allocation& a : leaked) report.leaks.push_back(namer.view(a));
  for (const Allocation& a : first.largest_intervals()) report.intervals.push_back(namer.view(a));

  report.failures = std::move(first.failures());
  report.memory_info = std::move(first.memory_info());

  // Pass 2.
  SecondPass second(first.spaces(), options.timeline_buckets);
  MemoryState second_state(&second);
  second.attach(&second_state);
  uint64_t ignored_lost = 0;
  replay_events(inputs, model, second_state, options.order, &ignored_lost);
  second.finish();

  for (const SpaceKey& key : ordered_spaces(first.spaces(), model)) {
    SpaceReport space = space_report(key, first.spaces().at(key), second.results()[key], model, namer);
    space.leaked_bytes = leaked_bytes[key];
    report.spaces.push_back(std::move(space));
  }
  return report;
}

namespace {

// Every AllocationView the report lists.
template <typename Report, typename Visit>
void for_each_listed(Report& report, Visit&& visit) {
  for (auto& space : report.spaces)
    for (auto& a : space.live_at_peak) visit(a);
  for (auto& failure : report.failures)
    for (auto& a : failure.largest) visit(a);
  for (auto& a : report.leaks) visit(a);
  for (auto& a : report.intervals) visit(a);
}

}  // namespace

void attach_call_stacks(const TraceModel& model, MemoryReport& report) {
  report.stacks_found = 0;
  StackFormatter formatter;
  for_each_listed(report, [&](AllocationView& a) {
    a.stack.reset();
    const SectionModel* section = model.find(a.space.section_id);
    if (section == nullptr || (a.native_stack == 0 && a.python_stack == 0)) return;
    std::string text = formatter.text(*section, a.native_stack, a.python_stack);
    if (text.empty()) return;
    a.stack = std::move(text);
    ++report.stacks_found;
  });
}

}  // namespace proflaunch::tools::memory
