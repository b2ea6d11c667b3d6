// Building blocks for hand-built traces in the tool tests: a process with
// the usual definitions, and launch/copy/memset/activity records with the
// fields tests look at.
#pragma once

#include <cstdint>
#include <string>

#include "formats/chunk_encoder.h"
#include "formats/trace_builder.h"

namespace proflaunch::testing {

using format::TraceBuilder;

// A wall-clock time that is a multiple of Kineto's base-time step
// (7,889,238 s): add_process's processes start there, so that the JSON's
// ts (ns after baseTimeNanoseconds) reads as time since the start.
constexpr uint64_t kKinetoQuarterWallNs = uint64_t{215} * 7'889'238 * 1'000'000'000;

// A section's definitions and the API numbers tests use.
struct TracedProcess {
  uint64_t section;
  uint32_t pid;
  uint64_t start_ns;  // ProcessInfo.monotonic_ns
  uint16_t launch_api = 0, copy_api = 0, memset_api = 0, sync_api = 0, stream_create_api = 0,
           malloc_api = 0;
};

TracedProcess add_process(TraceBuilder& trace, uint64_t section, uint32_t pid, uint64_t start_ns,
                          const std::string& host = "node1",
                          const std::string& command = "python train.py");

format::KernelLaunchRecord launch(const TracedProcess& p, uint64_t correlation_id, uint64_t begin_ns,
                                  uint64_t end_ns, uint64_t function, uint64_t stream, int32_t device = 0);
format::MemoryCopyRecord copy(const TracedProcess& p, uint64_t correlation_id, uint64_t begin_ns,
                              uint64_t end_ns, uint64_t bytes, uint64_t stream, int32_t device = 0);
format::MemorySetRecord memset(const TracedProcess& p, uint64_t correlation_id, uint64_t begin_ns,
                               uint64_t end_ns, uint64_t bytes, uint64_t stream, int32_t device = 0);
format::GpuActivityRecord activity(uint64_t correlation_id, uint64_t start_ns, uint64_t end_ns,
                                   uint64_t stream, format::GpuActivityKind kind, int32_t device = 0);

}  // namespace proflaunch::testing
