// The registry of stats sections. A new section: one file defining
// make_<name>(), one line here.
#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {

std::unique_ptr<StatsSection> make_gpu_kernel_summary();
std::unique_ptr<StatsSection> make_api_summary();

std::vector<std::unique_ptr<StatsSection>> make_stats_sections() {
  std::vector<std::unique_ptr<StatsSection>> sections;
  sections.push_back(make_gpu_kernel_summary());
  sections.push_back(make_api_summary());
  return sections;
}

}  // namespace proflaunch::tools::stats
