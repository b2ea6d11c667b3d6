// The registry of stats sections. A new section: one file defining
// make_<name>(), one line here.
#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {

std::unique_ptr<StatsSection> make_capture_window_summary();
std::unique_ptr<StatsSection> make_gpu_kernel_summary();
std::unique_ptr<StatsSection> make_memory_operation_summary();
std::unique_ptr<StatsSection> make_api_summary();
std::unique_ptr<StatsSection> make_call_site_summary(const StatsOptions& options);
std::unique_ptr<StatsSection> make_alloc_site_summary(const StatsOptions& options);
std::unique_ptr<StatsSection> make_code_summary(const StatsOptions& options);
std::unique_ptr<StatsSection> make_nccl_collective_summary();
std::unique_ptr<StatsSection> make_nccl_rank_summary();
std::unique_ptr<StatsSection> make_graph_summary();
std::unique_ptr<StatsSection> make_nvtx_summary();
std::unique_ptr<StatsSection> make_nvtx_gpu_summary();
std::unique_ptr<StatsSection> make_overview_summary(const StatsOptions& options);
std::unique_ptr<StatsSection> make_gpu_metrics_summary(const StatsOptions& options);
std::unique_ptr<StatsSection> make_recommendations(const StatsOptions& options);
std::unique_ptr<StatsSection> make_cpu_summary(const StatsOptions& options);

std::vector<std::unique_ptr<StatsSection>> make_stats_sections(const StatsOptions& options) {
  std::vector<std::unique_ptr<StatsSection>> sections;
  sections.push_back(make_capture_window_summary());
  sections.push_back(make_gpu_kernel_summary());
  sections.push_back(make_memory_operation_summary());
  sections.push_back(make_api_summary());
  sections.push_back(make_call_site_summary(options));
  sections.push_back(make_alloc_site_summary(options));
  sections.push_back(make_code_summary(options));
  sections.push_back(make_nccl_collective_summary());
  sections.push_back(make_nccl_rank_summary());
  sections.push_back(make_graph_summary());
  sections.push_back(make_nvtx_summary());
  sections.push_back(make_nvtx_gpu_summary());
  sections.push_back(make_overview_summary(options));
  sections.push_back(make_gpu_metrics_summary(options));
  sections.push_back(make_recommendations(options));
  sections.push_back(make_cpu_summary(options));
  return sections;
}

interpret::InterpretResult feed_sections(std::vector<InputTrace>& inputs, const TraceModel& model,
                                         std::vector<std::unique_ptr<StatsSection>>& sections) {
  std::vector<interpret::Consumer*> consumers;
  for (auto& section : sections) {
    for (interpret::Consumer* part : section->parts()) consumers.push_back(part);
    consumers.push_back(section.get());
  }
  interpret::InterpretOptions options;
  options.only_defined_sections = true;
  return interpret::Interpreter(model, consumers, options).run(inputs);
}

}  // namespace proflaunch::tools::stats
