// gpu-kernels: GPU time per kernel name (nsys: cuda_gpu_kern_sum). A kernel's
// name and launch shape come from its launch, its time from the GPU work the
// interpretation pass joined to it; what a launch says is read by
// kernel_launch_facts.h (shared with overview).
// A graph launch timed node by node (CUPTI) adds each kernel node it ran,
// named and shaped by its GraphNode record.
// Per name, besides the times: the launch shape that took the most GPU time
// and how many shapes there were, the grid's blocks per SM of the launching
// device (DeviceInfo's multiprocessor count) weighted by GPU time, the
// registers and static shared memory the function uses (FunctionDef), the
// estimated achieved occupancy (stats/occupancy.h) weighted by GPU time, and
// whether the name says it runs on tensor cores.
// Host functions queued on streams (cudaLaunchHostFunc, cudaStreamAddCallback,
// hipStreamAddCallback) are launched like kernels but are not kernel work:
// a note names them (interpret/host_function_names.h) with their count and
// the time they held their stream.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tools/proftrace/demangle.h"
#include "tools/proftrace/interpret/host_function_names.h"
#include "tools/proftrace/stats/duration_summary.h"
#include "tools/proftrace/stats/kernel_launch_facts.h"
#include "tools/proftrace/stats/stats_section.h"
#include "tools/proftrace/stats/tensor_core_kernels.h"

namespace proflaunch::tools::stats {
namespace {

using namespace format;

struct KernelSummary {
  DurationSummary durations;
  std::map<LaunchShape, uint64_t> ns_by_shape;
  double blocks_per_sm_ns = 0;  // sum of (blocks / SMs) x GPU ns over launches whose SM count is known
  double blocks_per_sm_sum = 0;
  uint64_t blocks_per_sm_weight_ns = 0;
  uint64_t with_sm_count = 0;
  std::map<FunctionResourceUse, uint64_t> ns_by_resources;
  double occupancy_ns = 0;  // sum of occupancy x GPU ns, as blocks_per_sm_ns
  double occupancy_sum = 0;
  uint64_t occupancy_weight_ns = 0;
  uint64_t with_occupancy = 0;
};

// Mean of a per-launch value weighted by GPU time, when every launch has one;
// the plain mean when every launch took 0 ns; else nullopt.
std::optional<double> weighted_mean(uint64_t launches, uint64_t with_value, double value_ns, uint64_t weight_ns,
                                    double value_sum) {
  if (launches == 0 || with_value != launches) return std::nullopt;
  if (weight_ns > 0) return value_ns / double(weight_ns);
  return value_sum / double(launches);
}

std::string format_dim3(const Dim3& d) {
  return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
}

std::string format_ratio(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

class GpuKernelSummary final : public StatsSection {
 public:
  std::string name() const override { return "gpu-kernels"; }

  void on_operation(const interpret::Operation& op, const interpret::GpuWork* gpu) override {
    if (op.kind != interpret::OperationKind::kKernel) return;
    if (op.captured()) return;  // runs only when its graph is launched (`graphs`)
    if ((op.launch.launch_flags & kLaunchHostFunction) != 0) {
      host_function(op, gpu);
      return;
    }
    if (gpu == nullptr || gpu->activity.kind != static_cast<uint8_t>(GpuActivityKind::kKernel)) {
      ++without_gpu_time_;
      return;
    }
    joined(kernel_launch_facts(*op.section->model, op.launch), gpu->duration_ns());
  }

  // Kernel work whose launch is not in the trace, and the kernel nodes of
  // graph launches, as they are read.
  void on_gpu_work_read(const interpret::GpuWork& work) override {
    const GpuActivityRecord& activity = work.activity;
    if (activity.kind != static_cast<uint8_t>(GpuActivityKind::kKernel) || activity.graph_node == 0) return;
    // A kernel node of a graph launch (its correlation id is the launch's):
    // named and shaped by its node.
    if (work.node != nullptr)
      joined(graph_node_kernel_facts(*work.section->model, *work.node, activity.device, activity.start_ns),
             work.duration_ns());
    else
      ++nodes_without_record_;
  }
  void on_gpu_work_alone(const interpret::GpuWork& work) override {
    if (work.activity.kind == static_cast<uint8_t>(GpuActivityKind::kKernel) && work.activity.graph_node == 0)
      ++activities_without_operation_;
  }

  Table finish(const TraceModel&) override {
    Table table;
    table.title = "GPU kernels: time per kernel name";
    table.columns = {"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Min (ns)", "Max (ns)",
                     "StdDev (ns)", "Grid", "Block", "Dyn Shared (B)", "Regs", "Static Shared (B)", "Shapes",
                     "Blocks/SM", "Est. Occupancy (%)", "Tensor Core", "Name"};
    uint64_t grand_total = 0;
    for (const auto& [name, summary] : by_name_) grand_total += summary.durations.total_ns;
    std::vector<std::pair<std::string, KernelSummary>> sorted(by_name_.begin(), by_name_.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      return a.second.durations.total_ns > b.second.durations.total_ns;
    });
    bool sm_count_missing = false;
    bool occupancy_missing = false;
    for (const auto& [name, k] : sorted) {
      const DurationSummary& s = k.durations;
      // The shape that took the most GPU time; the first in shape order on a tie.
      const auto main_shape = std::max_element(k.ns_by_shape.begin(), k.ns_by_shape.end(),
                                               [](const auto& a, const auto& b) { return a.second < b.second; });
      const std::string shown = name.empty() ? std::string("<unnamed kernel>") : demangle(name);
      std::string blocks_per_sm = "-";
      if (k.with_sm_count == s.count && k.blocks_per_sm_weight_ns > 0)
        blocks_per_sm = format_ratio(k.blocks_per_sm_ns / double(k.blocks_per_sm_weight_ns));
      else if (k.with_sm_count == s.count && s.count > 0)  // every launch took 0 ns: the plain mean
        blocks_per_sm = format_ratio(k.blocks_per_sm_sum / double(s.count));
      sm_count_missing = sm_count_missing || k.with_sm_count != s.count;
      // The function's resources as most of the name's GPU time saw them.
      std::string registers = "-", static_shared = "-";
      if (!k.ns_by_resources.empty()) {
        const auto main_resources = std::max_element(
            k.ns_by_resources.begin(), k.ns_by_resources.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
        registers = std::to_string(main_resources->first.registers_per_thread);
        static_shared = std::to_string(main_resources->first.static_shared_bytes);
      }
      std::string occupancy = "-";
      if (auto mean = weighted_mean(s.count, k.with_occupancy, k.occupancy_ns, k.occupancy_weight_ns,
                                    k.occupancy_sum))
        occupancy = format_ratio(*mean * 100.0);
      occupancy_missing = occupancy_missing || k.with_occupancy != s.count;
      table.rows.push_back({format_percent(grand_total ? double(s.total_ns) / double(grand_total) : 0),
                            format_ns(s.total_ns), std::to_string(s.count),
                            format_ns(static_cast<uint64_t>(s.mean_ns())), format_ns(s.min_ns), format_ns(s.max_ns),
                            format_ns(static_cast<uint64_t>(s.stddev_ns())), format_dim3(main_shape->first.grid),
                            format_dim3(main_shape->first.block),
                            std::to_string(main_shape->first.dynamic_shared_bytes), registers, static_shared,
                            std::to_string(k.ns_by_shape.size()), blocks_per_sm, occupancy,
                            is_tensor_core_kernel(shown) ? "yes" : "no", shown});
    }
    if (without_gpu_time_ > 0)
      table.notes.push_back(std::to_string(without_gpu_time_) +
                            " launches without GPU time (GPU timing off, or lost) are not counted");
    if (nodes_without_record_ > 0)
      table.notes.push_back(std::to_string(nodes_without_record_) +
                            " kernels run by graph launches whose node is not in the trace are not counted");
    if (activities_without_operation_ > 0)
      table.notes.push_back(std::to_string(activities_without_operation_) +
                            " GPU kernels whose launch is not in the trace are not counted");
    if (!host_functions_.empty()) table.notes.push_back(host_functions_note());
    if (sm_count_missing)
      table.notes.push_back("Blocks/SM is '-' where a launch's device has no DeviceInfo (no SM count)");
    if (occupancy_missing)
      table.notes.push_back(
          "Est. Occupancy is '-' where a launch lacks an input (the function's registers or shared memory, the "
          "device's SM limits: traces of older versions, failed queries)");
    return table;
  }

 private:
  void joined(const KernelLaunchFacts& launch, uint64_t gpu_ns) {
    KernelSummary& k = by_name_[launch.name];
    k.durations.add(gpu_ns);
    k.ns_by_shape[launch.shape] += gpu_ns;
    if (launch.resources) k.ns_by_resources[*launch.resources] += gpu_ns;
    if (launch.occupancy) {
      k.occupancy_ns += *launch.occupancy * double(gpu_ns);
      k.occupancy_weight_ns += gpu_ns;
      k.occupancy_sum += *launch.occupancy;
      ++k.with_occupancy;
    }
    const std::optional<double> blocks_per_sm = launch.blocks_per_sm();
    if (!blocks_per_sm) return;
    k.blocks_per_sm_ns += *blocks_per_sm * double(gpu_ns);
    k.blocks_per_sm_weight_ns += gpu_ns;
    k.blocks_per_sm_sum += *blocks_per_sm;
    ++k.with_sm_count;
  }

  struct HostFunctionSummary {
    uint64_t count = 0;
    uint64_t timed = 0;  // of them, with GPU time
    uint64_t gpu_ns = 0;
  };

  void host_function(const interpret::Operation& op, const interpret::GpuWork* gpu) {
    HostFunctionSummary& summary =
        host_functions_[host_function_names_.name(*op.section->model, op.launch.function, op.launch.span.begin_ns)];
    ++summary.count;
    if (gpu == nullptr || gpu->activity.kind != static_cast<uint8_t>(GpuActivityKind::kHostFunction)) return;
    ++summary.timed;
    summary.gpu_ns += gpu->duration_ns();
  }

  // "host functions on streams, not kernels (not counted above): f(void*) 3 times, 1200 ns; ..."
  std::string host_functions_note() const {
    std::vector<std::pair<std::string, HostFunctionSummary>> sorted(host_functions_.begin(), host_functions_.end());
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.second.gpu_ns > b.second.gpu_ns; });
    constexpr size_t kMaxNamed = 10;
    std::string note = "host functions run on streams, not kernels (not counted above): ";
    for (size_t i = 0; i < sorted.size() && i < kMaxNamed; ++i) {
      const auto& [name, summary] = sorted[i];
      if (i > 0) note += "; ";
      note += name + " " + std::to_string(summary.count) + (summary.count == 1 ? " time" : " times");
      if (summary.timed == summary.count) note += ", " + format_ns(summary.gpu_ns) + " ns";
      else if (summary.timed > 0) note += ", " + format_ns(summary.gpu_ns) + " ns in " + std::to_string(summary.timed);
      else note += ", no GPU time";
    }
    if (sorted.size() > kMaxNamed) note += "; and " + std::to_string(sorted.size() - kMaxNamed) + " more";
    return note;
  }

  std::map<std::string, KernelSummary> by_name_;
  interpret::HostFunctionNames host_function_names_;
  std::map<std::string, HostFunctionSummary> host_functions_;
  uint64_t nodes_without_record_ = 0;
  uint64_t without_gpu_time_ = 0;
  uint64_t activities_without_operation_ = 0;
};

}  // namespace

std::unique_ptr<StatsSection> make_gpu_kernel_summary() { return std::make_unique<GpuKernelSummary>(); }

}  // namespace proflaunch::tools::stats
