// Copies and memsets as stream operations: validation of the device side,
// the modelled duration, and the documented host-synchronization rules
// ("API synchronization behavior" in the CUDA driver API docs):
//   synchronous cuMemcpy*: return once the copy is done, except device to
//     device, which is asynchronous with respect to the host;
//   cuMemcpy*Async: asynchronous, except with pageable host memory, where the
//     simulator (as the real driver may) returns only after the copy;
//   synchronous cuMemset*: asynchronous unless the target is pinned host or
//     managed memory.
// Synchronous calls run on the legacy default stream (_ptds variants: the
// calling thread's per-thread default stream).
#pragma once

#include <cstddef>
#include <functional>

#include "context.h"
#include "cuda_api.h"

namespace simgpu {

enum class CopyKind { kHostToDevice, kDeviceToHost, kDeviceToDevice, kPeer, kHostToHost, kMemset };

// Latency + bytes / bandwidth of the copy kind (SIMGPU_*_GBPS, SIMGPU_COPY_LATENCY_NS).
int64_t transfer_duration_ns(CopyKind kind, size_t bytes);

struct Transfer {
  CopyKind kind = CopyKind::kDeviceToDevice;
  size_t bytes = 0;
  CUdeviceptr dst = 0;           // memsets: the destination (a graph node's parameters)
  std::function<void()> effect;  // the real data movement
  bool wait_for_completion = false;
  // An asynchronous call (cuMemcpy*Async) that waits only because a host side
  // is pageable: on a capturing stream it is captured like any async copy.
  bool asynchronous_call = false;
  std::vector<CompletionRef> extra_waits;
  // For a tools library: the memory on each side (SimgpuToolsMemoryKind).
  uint8_t src_kind = 0;
  uint8_t dst_kind = 0;
};

// Queues the transfer on `stream` and, if asked, waits for it.
CUresult run_transfer(CUstream_st* stream, Transfer transfer);

// Which stream an API variant's implicit or explicit stream handle means.
enum class Api { kSync, kSyncPerThread, kAsync, kAsyncPerThread };
CUresult stream_for(Api api, CUstream handle, CUstream_st*& stream);
inline bool is_sync(Api api) { return api == Api::kSync || api == Api::kSyncPerThread; }

// One side of a copy, classified through the memory registry.
struct Endpoint {
  bool is_device = false;  // device, managed, pool, VMM or module memory
  bool is_pinned_host = false;
  int device = -1;
};
// Classifies [address, address + bytes): device-side memory must lie entirely
// in one allocation (else CUDA_ERROR_INVALID_VALUE); anything unknown is host memory.
CUresult classify_endpoint(uintptr_t address, size_t bytes, Endpoint& endpoint);

// SimgpuToolsMemoryKind of a classified endpoint.
uint8_t tools_memory_kind(const Endpoint& endpoint);

// CopyKind for a copy between two classified endpoints.
CopyKind copy_kind(const Endpoint& dst, const Endpoint& src);

}  // namespace simgpu
