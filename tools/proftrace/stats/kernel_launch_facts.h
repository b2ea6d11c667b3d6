// What a kernel launch says about how well it can use its GPU, from the
// KernelLaunch record, the function's FunctionDef and the device's
// DeviceInfo: its name, launch shape, the function's resources, the grid's
// blocks per SM and the estimated achieved occupancy (occupancy.h). Shared by
// gpu-kernels (per kernel name) and overview (per device), so that both say
// the same about the same launch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

#include "formats/records.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools::stats {

struct LaunchShape {
  format::Dim3 grid;
  format::Dim3 block;
  uint32_t dynamic_shared_bytes;
  auto tied() const {
    return std::tie(grid.x, grid.y, grid.z, block.x, block.y, block.z, dynamic_shared_bytes);
  }
  bool operator<(const LaunchShape& other) const { return tied() < other.tied(); }
  uint64_t blocks() const { return uint64_t{grid.x} * grid.y * grid.z; }
};

struct FunctionResourceUse {
  uint32_t registers_per_thread;
  uint32_t static_shared_bytes;
  auto tied() const { return std::tie(registers_per_thread, static_shared_bytes); }
  bool operator<(const FunctionResourceUse& other) const { return tied() < other.tied(); }
};

struct KernelLaunchFacts {
  std::string name;  // as the FunctionDef says (mangled); "": no FunctionDef
  uint32_t name_string = 0;  // the FunctionDef's StringDef id (0: none), a key for per-name caches
  LaunchShape shape;
  uint32_t multiprocessor_count = 0;             // 0: the device's DeviceInfo is not in the trace
  std::optional<FunctionResourceUse> resources;  // the FunctionDef's, when the driver said
  std::optional<double> occupancy;               // estimated achieved, 0..1

  // Grid blocks / the device's SMs; nullopt without an SM count.
  std::optional<double> blocks_per_sm() const {
    if (multiprocessor_count == 0) return std::nullopt;
    return double(shape.blocks()) / double(multiprocessor_count);
  }
};

KernelLaunchFacts kernel_launch_facts(const SectionModel& section, const format::KernelLaunchRecord& launch);

// The same for a kernel node of a graph, as one launch of the graph ran it
// on `device` at `at_ns` (a per-node GpuActivity: CUPTI times each node).
KernelLaunchFacts graph_node_kernel_facts(const SectionModel& section, const format::GraphNodeRecord& node,
                                          int32_t device, uint64_t at_ns);

}  // namespace proflaunch::tools::stats
