// The GraphNode records read so far, by section and node handle. A graph
// launch timed node by node (CUPTI) gives each node its own GpuActivity,
// which carries the launch's correlation id and the node's handle: the node
// says what ran (its kernel and shape, its copy or memset). Written at
// instantiation, a node's record comes before any launch of its graph. State
// grows with the nodes instantiated, not with launches.
#pragma once

#include <cstdint>
#include <map>
#include <utility>

#include "formats/records.h"

namespace proflaunch::tools::stats {

class GraphNodeIndex {
 public:
  void add(uint64_t section, const format::GraphNodeRecord& node) { nodes_[{section, node.node}] = node; }
  // Null when the node's record is not in the trace.
  const format::GraphNodeRecord* find(uint64_t section, uint64_t node) const {
    auto found = nodes_.find({section, node});
    return found != nodes_.end() ? &found->second : nullptr;
  }

 private:
  std::map<std::pair<uint64_t, uint64_t>, format::GraphNodeRecord> nodes_;
};

}  // namespace proflaunch::tools::stats
