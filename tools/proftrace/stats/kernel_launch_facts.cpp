#include "tools/proftrace/stats/kernel_launch_facts.h"

#include "tools/proftrace/stats/occupancy.h"

namespace proflaunch::tools::stats {

using namespace format;

KernelLaunchFacts kernel_launch_facts(const SectionModel& section, const KernelLaunchRecord& launch) {
  KernelLaunchFacts facts;
  facts.shape = LaunchShape{launch.grid, launch.block, launch.dynamic_shared_bytes};
  const FunctionDefRecord* function = section.function_def(launch.function, launch.span.begin_ns);
  if (function != nullptr) {
    facts.name = std::string(section.string(function->name_string));
    facts.name_string = function->name_string;
    constexpr uint32_t kResourceBits = kFunctionRegisters | kFunctionStaticShared;
    if ((function->attributes_known & kResourceBits) == kResourceBits)
      facts.resources = FunctionResourceUse{function->registers_per_thread, function->static_shared_bytes};
  }
  if (auto device = section.devices.find(launch.device); device != section.devices.end()) {
    facts.multiprocessor_count = device->second.multiprocessor_count;
    if (function != nullptr)
      if (auto inputs = occupancy_inputs(launch, *function, device->second))
        if (auto occupancy = compute_occupancy(*inputs)) facts.occupancy = occupancy->achieved_estimate;
  }
  return facts;
}

}  // namespace proflaunch::tools::stats
