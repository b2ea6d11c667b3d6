#include "tools/proftrace/stats/kernel_launch_facts.h"

#include "tools/proftrace/stats/amd_occupancy.h"

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
      if (auto occupancy =
              launch_occupancy(launch, *function, device->second, section.string(device->second.name_string)))
        facts.occupancy = occupancy->achieved_estimate;
  }
  return facts;
}

KernelLaunchFacts graph_node_kernel_facts(const SectionModel& section, const GraphNodeRecord& node, int32_t device,
                                          uint64_t at_ns) {
  // What a launch of the node would have said: its function and shape are
  // the node's, fixed at instantiation.
  KernelLaunchRecord launch{};
  launch.function = node.function;
  launch.grid = node.grid;
  launch.block = node.block;
  launch.dynamic_shared_bytes = node.dynamic_shared_bytes;
  launch.device = device;
  launch.span.begin_ns = at_ns;
  return kernel_launch_facts(section, launch);
}

}  // namespace proflaunch::tools::stats
