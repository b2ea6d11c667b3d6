// The driver's side of simgpu_tools.h: API call tracing, completed work and
// resource events for an attached tools library. Costs one relaxed load per
// API call and per completed operation while no tool is attached.
#pragma once

#include <atomic>
#include <cstdint>

#include "cuda_api.h"
#include "simgpu_tools.h"

namespace simgpu {

struct StreamOperation;
struct MemoryRange;

namespace tools {

extern std::atomic<SimgpuToolsApiCallback> g_api_callback;

// The outermost call's correlation id on this thread (0 outside any call).
uint32_t current_correlation_id() noexcept;

// Brackets one API call: entry callback, exit callback, correlation nesting.
class ApiScope {
 public:
  ApiScope(int domain, const char* name) noexcept;
  ~ApiScope() = default;
  void exit(int result) noexcept;

 private:
  SimgpuToolsApiCall call_{};
  SimgpuToolsApiCallback callback_ = nullptr;
  bool outermost_ = false;
};

// From the stream worker, once `op` completed (no-op without a tool).
void work_completed(const StreamOperation& op, CUstream_st* stream, int64_t start_ns, int64_t end_ns) noexcept;

void resource(int event, CUcontext context, CUstream stream) noexcept;

// Inside cuGraphInstantiate, once per node of the executable graph (no-op
// without a tool).
void graph_node_cloned(CUcontext context, CUgraphExec exec, CUgraph original_graph, CUgraphNode node,
                       CUgraphNode original, CUgraphNodeType type) noexcept;

// A range entered or left the memory registry (no-op without a tool, and
// for kinds the interface does not report).
void memory(int event, const MemoryRange& range) noexcept;

inline bool api_traced() noexcept { return g_api_callback.load(std::memory_order_relaxed) != nullptr; }

}  // namespace tools
}  // namespace simgpu
