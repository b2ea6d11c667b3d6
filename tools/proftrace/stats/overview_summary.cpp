// overview: where did the time go. Four tables: the GPUs of the trace; GPU
// utilization (the union of GPU work over the analysed time, per device and
// over all devices); how well the kernels used each device (SM efficiency
// and occupancy estimates, tensor-core share); and per step, its time split
// into kernel, memcpy, memset, communication, sync wait, CPU-only and other.
// The rules (how steps are found, how overlaps are attributed, the
// estimates) are in tools/README.md, "overview".
//
// Memory: the timeline is bounded (category_timeline.h); the steps are
// found by StepDetector (step_detection.h, shared with recommendations),
// whose memory is said there; launches come with their kernel's GPU time
// (the interpretation pass's join); per device a few sums, per kernel name
// its tensor-core verdict.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "tools/proftrace/demangle.h"
#include "tools/proftrace/record_text.h"
#include "tools/proftrace/stats/category_timeline.h"
#include "tools/proftrace/stats/kernel_launch_facts.h"
#include "tools/proftrace/stats/stats_section.h"
#include "tools/proftrace/stats/step_detection.h"
#include "tools/proftrace/stats/tensor_core_kernels.h"

namespace proflaunch::tools::stats {
namespace {

using namespace format;

// The Device column: CUDA's ordinal; an AMD device by its HIP ordinal ("AMD
// GPU 0"), not the trace's kAmdDeviceBase + ordinal.
std::string device_cell(int32_t device) {
  return format::is_amd_device(device) ? device_label(device) : std::to_string(device);
}

constexpr const char* kStepsTitle = "Overview: step time breakdown";

// Categories in the order of the output columns.
constexpr std::array<TimeCategory, 5> kGpuColumns = {TimeCategory::kKernel, TimeCategory::kMemcpy,
                                                     TimeCategory::kMemset, TimeCategory::kCommunication,
                                                     TimeCategory::kSyncWait};

using DeviceKey = std::pair<uint64_t, int32_t>;  // (section, device)

// What the overview keeps of a launch while it waits for its GPU time.
struct KernelEstimates {
  DeviceKey device;
  std::optional<double> blocks_per_sm;
  std::optional<double> occupancy;  // estimated achieved, 0..1
  bool tensor_core = false;
};

// Per device, sums over its kernels that were joined to their launch.
struct DeviceKernels {
  uint64_t kernels = 0, kernel_ns = 0;  // every kernel activity on the device
  uint64_t joined = 0, joined_ns = 0;   // those whose launch was found
  double sm_efficiency_ns = 0;          // sum of min(blocks per SM, 1) x GPU ns
  uint64_t with_sm_count = 0;
  double occupancy_ns = 0, occupancy_sum = 0;
  uint64_t occupancy_weight_ns = 0, with_occupancy = 0;
  uint64_t tensor_core_ns = 0;

  void add(const DeviceKernels& other) {
    kernels += other.kernels;
    kernel_ns += other.kernel_ns;
    joined += other.joined;
    joined_ns += other.joined_ns;
    sm_efficiency_ns += other.sm_efficiency_ns;
    with_sm_count += other.with_sm_count;
    occupancy_ns += other.occupancy_ns;
    occupancy_sum += other.occupancy_sum;
    occupancy_weight_ns += other.occupancy_weight_ns;
    with_occupancy += other.with_occupancy;
    tensor_core_ns += other.tensor_core_ns;
  }
};

class OverviewSummary final : public StatsSection {
 public:
  explicit OverviewSummary(const StatsOptions& options)
      : top_(options.top), timeline_bins_(options.timeline_bins), steps_(options.step_range) {}
  std::string name() const override { return "overview"; }

  std::vector<interpret::Consumer*> parts() override { return {&steps_}; }

  void on_synchronize(const interpret::SynchronizeEvent& e) override {
    if (e.record.target != static_cast<uint8_t>(SyncTarget::kStreamWaitEvent))
      timeline_.add(e.record.span.begin_ns, e.record.span.end_ns, TimeCategory::kSyncWait);
  }

  void on_gpu_work_read(const interpret::GpuWork& work) override {
    const GpuActivityRecord& activity = work.activity;
    const SectionModel& section = *work.section->model;
    const uint64_t s = section.section_id;
    TimeCategory category = TimeCategory::kOtherGpu;
    switch (static_cast<GpuActivityKind>(activity.kind)) {
      case GpuActivityKind::kKernel:
        // A collective's kernel (a grouped call's: its group's), once it succeeded.
        category = work.collective != nullptr && (work.collective->group || work.collective->succeeded)
                       ? TimeCategory::kCommunication
                       : TimeCategory::kKernel;
        break;
      case GpuActivityKind::kMemoryCopy: category = TimeCategory::kMemcpy; break;
      case GpuActivityKind::kMemorySet: category = TimeCategory::kMemset; break;
      default: break;
    }
    const auto [it, added] = devices_.emplace(std::make_pair(s, activity.device), devices_.size());
    timeline_.add(activity.start_ns, activity.end_ns, category, it->second);
    if (activity.kind != static_cast<uint8_t>(GpuActivityKind::kKernel)) return;
    DeviceKernels& kernels = kernels_[it->first];
    ++kernels.kernels;
    kernels.kernel_ns += work.duration_ns();
    // A kernel node of a graph launch (the launch's correlation id): its
    // shape is its node's.
    if (activity.graph_node != 0 && work.node != nullptr)
      kernel_ran(estimates_of(section, graph_node_kernel_facts(section, *work.node, activity.device, activity.start_ns),
                              activity.device),
                 work.duration_ns());
  }

  // A kernel launch with its kernel's GPU work.
  void on_operation(const interpret::Operation& op, const interpret::GpuWork* gpu) override {
    if (op.kind != interpret::OperationKind::kKernel || op.captured() || gpu == nullptr ||
        gpu->activity.kind != static_cast<uint8_t>(GpuActivityKind::kKernel) || gpu->activity.graph_node != 0)
      return;
    const SectionModel& section = *op.section->model;
    kernel_ran(estimates_of(section, kernel_launch_facts(section, op.launch), op.launch.device), gpu->duration_ns());
  }

  // The step breakdown (finish_tables has them all).
  Table finish(const TraceModel& model) override {
    for (Table& table : finish_tables(model))
      if (table.title == kStepsTitle) return std::move(table);
    return {};
  }
  std::vector<Table> finish_tables(const TraceModel& model) override;

 private:
  KernelEstimates estimates_of(const SectionModel& section, const KernelLaunchFacts& facts, int32_t device) {
    KernelEstimates estimates{{section.section_id, device}, facts.blocks_per_sm(), facts.occupancy, false};
    if (facts.name_string != 0) {
      const auto [verdict, added] = tensor_core_.emplace(std::make_pair(section.section_id, facts.name_string), false);
      if (added) verdict->second = is_tensor_core_kernel(demangle(facts.name));
      estimates.tensor_core = verdict->second;
    }
    return estimates;
  }

  void kernel_ran(const KernelEstimates& launch, uint64_t gpu_ns) {
    DeviceKernels& k = kernels_[launch.device];
    ++k.joined;
    k.joined_ns += gpu_ns;
    if (launch.blocks_per_sm) {
      k.sm_efficiency_ns += std::min(*launch.blocks_per_sm, 1.0) * double(gpu_ns);
      ++k.with_sm_count;
    }
    if (launch.occupancy) {
      k.occupancy_ns += *launch.occupancy * double(gpu_ns);
      k.occupancy_sum += *launch.occupancy;
      k.occupancy_weight_ns += gpu_ns;
      ++k.with_occupancy;
    }
    if (launch.tensor_core) k.tensor_core_ns += gpu_ns;
  }

  Table devices_table(const TraceModel& model) const;
  Table utilization_table(const TraceModel& model) const;
  Table kernels_table(const TraceModel& model);
  Table steps_table(const std::vector<Step>& steps, const std::string& method) const;
  Table activity_table() const;

  size_t top_;
  size_t timeline_bins_;
  StepDetector steps_;
  CategoryTimeline timeline_;
  std::map<DeviceKey, uint64_t> devices_;                        // (section, device) -> timeline device key
  std::map<DeviceKey, DeviceKernels> kernels_;
  std::map<std::pair<uint64_t, uint32_t>, bool> tensor_core_;  // (section, name string) -> the name's verdict
};


Table OverviewSummary::devices_table(const TraceModel& model) const {
  Table table;
  table.title = "Overview: GPUs";
  table.columns = {"PID", "Device", "SMs", "Memory (MiB)", "Name"};
  for (const SectionModel* section : model.ordered())
    for (const auto& [ordinal, device] : section->devices)
      table.rows.push_back({std::to_string(section->pid()), device_cell(ordinal),
                            std::to_string(device.multiprocessor_count),
                            std::to_string(device.total_memory_bytes >> 20),
                            std::string(section->string(device.name_string))});
  return table;
}

Table OverviewSummary::utilization_table(const TraceModel& model) const {
  Table table;
  table.title = "Overview: GPU utilization";
  table.columns = {"PID", "Device", "Busy (ns)", "Analysed (ns)", "Utilization (%)"};
  if (steps_.last_ns() <= steps_.first_ns()) return table;
  const uint64_t analysed = steps_.last_ns() - steps_.first_ns();
  const auto& busy = timeline_.device_busy_ns();
  for (const auto& [device, key] : devices_) {
    const SectionModel* section = model.find(device.first);
    const auto it = busy.find(key);
    const uint64_t ns = it != busy.end() ? it->second : 0;
    table.rows.push_back({std::to_string(section ? section->pid() : 0), device_cell(device.second),
                          format_ns(ns), format_ns(analysed), format_percent(double(ns) / double(analysed))});
  }
  uint64_t any = 0;
  for (size_t c = 0; c < kTimeCategories; ++c)
    if (is_gpu_category(static_cast<TimeCategory>(c))) any += timeline_.totals()[c];
  table.rows.push_back({"all", "all", format_ns(any), format_ns(analysed),
                        format_percent(double(any) / double(analysed))});
  table.notes.push_back("busy: the union of GPU work (kernels, copies, memsets, other) on the device; all: on any "
                        "device. Analysed: the first to the last event of the trace");
  return table;
}

std::string format_optional_percent(std::optional<double> fraction) {
  return fraction ? format_percent(*fraction) : std::string("-");
}

Table OverviewSummary::kernels_table(const TraceModel& model) {
  Table table;
  table.title = "Overview: kernels";
  table.columns = {"PID", "Device", "Kernel Time (ns)", "Kernels", "SM Efficiency (%)", "Est. Occupancy (%)",
                   "Tensor Core Time (ns)", "Tensor Core (%)"};
  const auto& busy = timeline_.device_busy_ns();
  bool no_sm_count = false, no_occupancy = false, partial_occupancy = false;
  DeviceKernels all;
  double all_sm_efficiency_ns = 0;
  uint64_t all_busy_with_sm_count = 0;
  auto row = [&](const std::string& pid, const std::string& device, const DeviceKernels& k, uint64_t busy_ns,
                 double sm_efficiency_ns, bool sm_known) {
    std::optional<double> sm_efficiency, occupancy, tensor_core;
    // Concurrent kernels can add up to more than the busy time.
    if (sm_known && busy_ns > 0) sm_efficiency = std::min(1.0, sm_efficiency_ns / double(busy_ns));
    if (k.occupancy_weight_ns > 0) occupancy = k.occupancy_ns / double(k.occupancy_weight_ns);
    else if (k.with_occupancy > 0) occupancy = k.occupancy_sum / double(k.with_occupancy);  // all took 0 ns
    if (k.joined_ns > 0) tensor_core = double(k.tensor_core_ns) / double(k.joined_ns);
    table.rows.push_back({pid, device, format_ns(k.kernel_ns), std::to_string(k.kernels),
                          format_optional_percent(sm_efficiency), format_optional_percent(occupancy),
                          format_ns(k.tensor_core_ns), format_optional_percent(tensor_core)});
    no_sm_count = no_sm_count || (k.joined > 0 && !sm_known);
    no_occupancy = no_occupancy || (k.joined > 0 && k.with_occupancy == 0);
    partial_occupancy = partial_occupancy || (k.with_occupancy > 0 && k.with_occupancy < k.joined);
  };
  for (const auto& [device, k] : kernels_) {
    const SectionModel* section = model.find(device.first);
    const auto key = devices_.find(device);
    const auto it = key != devices_.end() ? busy.find(key->second) : busy.end();
    const uint64_t busy_ns = it != busy.end() ? it->second : 0;
    // Launches on one device all have its SM count or none do.
    const bool sm_known = k.joined > 0 && k.with_sm_count == k.joined;
    row(std::to_string(section ? section->pid() : 0), device_cell(device.second), k, busy_ns,
        k.sm_efficiency_ns, sm_known);
    all.add(k);
    if (sm_known) {
      all_sm_efficiency_ns += k.sm_efficiency_ns;
      all_busy_with_sm_count += busy_ns;
    }
  }
  if (table.rows.empty()) return table;
  row("all", "all", all, all_busy_with_sm_count, all_sm_efficiency_ns, all_busy_with_sm_count > 0);
  table.notes.push_back(
      "SM Efficiency: per kernel min(grid blocks / the device's SMs, 1) x its GPU time, summed and divided by the "
      "device's busy time (Overview: GPU utilization), as the PyTorch profiler's TensorBoard plugin estimates it; "
      "all: over the devices with an SM count. Est. Occupancy: gpu-kernels' estimate per launch, weighted by GPU "
      "time. Tensor Core: kernel time in kernels whose names say they use tensor cores (gpu-kernels' heuristic)");
  if (no_sm_count)
    table.notes.push_back("SM Efficiency is '-' on a device without DeviceInfo (no SM count: a trace of an older "
                          "version)");
  if (no_occupancy)
    table.notes.push_back("Est. Occupancy is '-' where no launch had every input: the function's registers and "
                          "shared memory (FunctionDef) and the device's SM limits (DeviceInfo) are not recorded "
                          "for HIP, in traces of older versions, or when the driver's query failed");
  if (partial_occupancy)
    table.notes.push_back("Est. Occupancy covers only the launches that had every input (some lacked the "
                          "function's registers or the device's limits)");
  if (all.joined < all.kernels)
    table.notes.push_back(std::to_string(all.kernels - all.joined) + " kernels (" +
                          format_ns(all.kernel_ns - std::min(all.kernel_ns, all.joined_ns)) +
                          " ns) had no launch to join (graph nodes, lost or evicted launches): in Kernel Time "
                          "and the busy time, not in the estimates");
  return table;
}

Table OverviewSummary::steps_table(const std::vector<Step>& steps, const std::string& method) const {
  Table table;
  table.title = kStepsTitle;
  table.columns = {"Step", "Start (ns)", "Duration (ns)"};
  const char* names[] = {"Kernel", "Memcpy", "Memset", "Communication", "Sync Wait", "CPU Only", "Other"};
  for (const char* n : names) {
    table.columns.push_back(std::string(n) + " (ns)");
    table.columns.push_back(std::string(n) + " (%)");
  }
  if (steps_.last_ns() <= steps_.first_ns()) return table;
  // Columns: the five of kGpuColumns, CPU-only (the rest), other GPU work.
  using Breakdown = std::array<uint64_t, 7>;
  auto breakdown_of = [&](const Step& step) {
    const auto times = timeline_.breakdown(step.begin_ns, step.end_ns);
    Breakdown b{};
    uint64_t attributed = 0;
    for (size_t i = 0; i < kGpuColumns.size(); ++i) b[i] = std::llround(times[size_t(kGpuColumns[i])]);
    b[6] = std::llround(times[size_t(TimeCategory::kOtherGpu)]);
    for (size_t i : {0, 1, 2, 3, 4, 6}) attributed += b[i];
    const uint64_t duration = step.end_ns - step.begin_ns;
    b[5] = duration > attributed ? duration - attributed : 0;
    return b;
  };
  auto row = [&](const std::string& label, const std::string& start, double duration, const std::array<double, 7>& b) {
    std::vector<std::string> cells = {label, start, format_ns(std::llround(duration))};
    for (double ns : b) {
      cells.push_back(format_ns(std::llround(ns)));
      cells.push_back(format_percent(duration > 0 ? ns / duration : 0));
    }
    table.rows.push_back(std::move(cells));
  };
  const std::vector<Step> analysed = steps.empty() ? std::vector<Step>{{steps_.first_ns(), steps_.last_ns()}} : steps;
  const size_t shown_first = analysed.size() <= top_ ? analysed.size() : top_ / 2;
  const size_t shown_last = analysed.size() <= top_ ? 0 : top_ - top_ / 2;
  std::array<double, 7> total{};
  double total_duration = 0;
  for (size_t i = 0; i < analysed.size(); ++i) {
    const Step& step = analysed[i];
    const Breakdown b = breakdown_of(step);
    std::array<double, 7> as_double{};
    for (size_t c = 0; c < 7; ++c) total[c] += double(as_double[c] = double(b[c]));
    total_duration += double(step.end_ns - step.begin_ns);
    if (i < shown_first || i >= analysed.size() - shown_last)
      row(std::to_string(i + 1), format_ns(step.begin_ns - std::min(step.begin_ns, steps_.first_ns())),
          double(step.end_ns - step.begin_ns), as_double);
  }
  std::array<double, 7> average = total;
  for (double& ns : average) ns /= double(analysed.size());
  row("average", "-", total_duration / double(analysed.size()), average);
  row("total", "-", total_duration, total);

  table.notes.push_back(method);
  if (analysed.size() > shown_first + shown_last)
    table.notes.push_back("rows: the first " + std::to_string(shown_first) + " and the last " +
                          std::to_string(shown_last) + " of " + std::to_string(analysed.size()) +
                          " steps (--top); average and total cover all of them");
  table.notes.push_back("each instant counts once: communication > kernel > memcpy > memset > other GPU work; "
                        "when no GPU work runs, sync wait if a host thread is in a synchronizing call, else CPU "
                        "only. Start: from the first event of the trace");
  if (timeline_.bin_width_ns() > 1)
    table.notes.push_back("step edges are resolved to " + format_ns(timeline_.bin_width_ns()) +
                          " ns (the timeline's bins for a run this long)");
  if (timeline_.late_intervals() > 0)
    table.notes.push_back(std::to_string(timeline_.late_intervals()) +
                          " intervals came too late in the file to be placed in full (counted from the time "
                          "already swept on)");
  if (steps_.dropped_ranges() > 0)
    table.notes.push_back(std::to_string(steps_.dropped_ranges()) + " NVTX ranges past the first " +
                          std::to_string(StepDetector::max_stored_ranges()) + " step candidates were not considered");
  return table;
}

// The analysed span in `timeline_bins_` equal bins, each bin's time per
// category (the same attribution as the steps: each instant counts once).
Table OverviewSummary::activity_table() const {
  Table table;
  table.title = "Overview: GPU activity over time";
  table.columns = {"Start (ns)", "End (ns)"};
  const char* names[] = {"Kernel", "Memcpy", "Memset", "Communication", "Sync Wait", "Other"};
  for (const char* n : names) table.columns.push_back(std::string(n) + " (ns)");
  table.columns.push_back("GPU Busy (%)");
  if (timeline_bins_ == 0 || steps_.last_ns() <= steps_.first_ns()) return table;
  const uint64_t first = steps_.first_ns(), span = steps_.last_ns() - first;
  const uint64_t bins = std::min<uint64_t>(timeline_bins_, span);
  for (uint64_t i = 0; i < bins; ++i) {
    // Exact edges: bin i is [first + span*i/bins, first + span*(i+1)/bins).
    const auto edge = [&](uint64_t k) { return first + uint64_t((unsigned __int128)span * k / bins); };
    const uint64_t begin = edge(i), end = edge(i + 1);
    const auto times = timeline_.breakdown(begin, end);
    std::vector<std::string> cells = {format_ns(begin - first), format_ns(end - first)};
    double gpu = 0;
    for (TimeCategory c : kGpuColumns) cells.push_back(format_ns(std::llround(times[size_t(c)])));
    cells.push_back(format_ns(std::llround(times[size_t(TimeCategory::kOtherGpu)])));
    for (size_t c = 0; c < kTimeCategories; ++c)
      if (is_gpu_category(static_cast<TimeCategory>(c))) gpu += times[c];
    cells.push_back(format_percent(end > begin ? std::min(1.0, gpu / double(end - begin)) : 0));
    table.rows.push_back(std::move(cells));
  }
  table.notes.push_back("the analysed time in " + std::to_string(bins) +
                        " equal bins, from the first event of the trace; each instant counts once, as in the "
                        "step breakdown. GPU busy: any GPU work on any device");
  return table;
}

std::vector<Table> OverviewSummary::finish_tables(const TraceModel& model) {
  timeline_.finish();
  std::string method;
  const std::vector<Step> steps = steps_.find_steps(&method);
  std::vector<Table> tables;
  tables.push_back(devices_table(model));
  tables.push_back(utilization_table(model));
  tables.push_back(kernels_table(model));
  tables.push_back(steps_table(steps, method));
  tables.push_back(activity_table());
  return tables;
}

}  // namespace

std::unique_ptr<StatsSection> make_overview_summary(const StatsOptions& options) {
  return std::make_unique<OverviewSummary>(options);
}

}  // namespace proflaunch::tools::stats
