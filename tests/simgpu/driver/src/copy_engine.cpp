#include "copy_engine.h"

#include "capture.h"
#include "driver_state.h"
#include "memory.h"
#include "simgpu_tools.h"

namespace simgpu {

int64_t transfer_duration_ns(CopyKind kind, size_t bytes) {
  const DriverConfig& config = state().config;
  double bytes_per_ns = config.d2d_bytes_per_ns;
  switch (kind) {
    case CopyKind::kHostToDevice:
      bytes_per_ns = config.h2d_bytes_per_ns;
      break;
    case CopyKind::kDeviceToHost:
      bytes_per_ns = config.d2h_bytes_per_ns;
      break;
    case CopyKind::kPeer:
      bytes_per_ns = config.p2p_bytes_per_ns;
      break;
    case CopyKind::kHostToHost:
      bytes_per_ns = config.h2d_bytes_per_ns;
      break;
    case CopyKind::kDeviceToDevice:
    case CopyKind::kMemset:
      break;
  }
  return config.copy_latency_ns + int64_t(double(bytes) / bytes_per_ns + 0.5);
}

CUresult run_transfer(CUstream_st* stream, Transfer transfer) {
  // Only a synchronous call is prohibited on (or against) a capturing stream:
  // the CUDA samples (graphMemoryNodes) capture cudaMemcpyAsync from malloc()ed
  // memory in global mode, and the real driver records it as a memcpy node.
  const bool synchronous_call = transfer.wait_for_completion && !transfer.asynchronous_call;
  if (CUresult result = check_capture_submit(stream, synchronous_call); result != CUDA_SUCCESS) return result;
  // A captured copy does not run now: nothing to wait for.
  const bool wait = transfer.wait_for_completion && !stream_captures(stream);
  StreamOperation op;
  op.node.type = transfer.kind == CopyKind::kMemset ? CU_GRAPH_NODE_TYPE_MEMSET : CU_GRAPH_NODE_TYPE_MEMCPY;
  op.node.bytes = transfer.bytes;
  op.node.dst = transfer.dst;
  op.duration_ns = transfer_duration_ns(transfer.kind, transfer.bytes);
  op.effect = std::move(transfer.effect);
  op.waits = std::move(transfer.extra_waits);
  switch (transfer.kind) {
    case CopyKind::kHostToDevice: op.tools.copy_kind = SIMGPU_TOOLS_COPY_HTOD; break;
    case CopyKind::kDeviceToHost: op.tools.copy_kind = SIMGPU_TOOLS_COPY_DTOH; break;
    case CopyKind::kDeviceToDevice: op.tools.copy_kind = SIMGPU_TOOLS_COPY_DTOD; break;
    case CopyKind::kPeer: op.tools.copy_kind = SIMGPU_TOOLS_COPY_PTOP; break;
    case CopyKind::kHostToHost: op.tools.copy_kind = SIMGPU_TOOLS_COPY_HTOH; break;
    case CopyKind::kMemset: break;
  }
  op.tools.src_kind = transfer.src_kind;
  op.tools.dst_kind = transfer.dst_kind;
  CompletionRef completion = submit(stream, std::move(op));
  if (wait) completion->wait();
  return CUDA_SUCCESS;
}

uint8_t tools_memory_kind(const Endpoint& endpoint) {
  if (endpoint.is_device) return SIMGPU_TOOLS_DEVICE;
  return endpoint.is_pinned_host ? SIMGPU_TOOLS_PINNED : SIMGPU_TOOLS_PAGEABLE;
}

CUresult stream_for(Api api, CUstream handle, CUstream_st*& stream) {
  switch (api) {
    case Api::kSync:
      return resolve_stream(CU_STREAM_LEGACY, NullStream::kLegacy, stream);
    case Api::kSyncPerThread:
      return resolve_stream(CU_STREAM_PER_THREAD, NullStream::kPerThread, stream);
    case Api::kAsync:
      return resolve_stream(handle, NullStream::kLegacy, stream);
    case Api::kAsyncPerThread:
      return resolve_stream(handle, NullStream::kPerThread, stream);
  }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult classify_endpoint(uintptr_t address, size_t bytes, Endpoint& endpoint) {
  endpoint = Endpoint{};
  auto range = state().memory.find(address);
  if (!range) return CUDA_SUCCESS;  // pageable host memory
  if (is_host_memory(range->kind)) {
    endpoint.is_pinned_host = true;
    return CUDA_SUCCESS;
  }
  MemoryRange covering;
  if (CUresult result = find_device_accessible(address, bytes, covering); result != CUDA_SUCCESS) {
    return result;
  }
  endpoint.is_device = true;
  endpoint.device = covering.device;
  return CUDA_SUCCESS;
}

CopyKind copy_kind(const Endpoint& dst, const Endpoint& src) {
  if (dst.is_device && src.is_device) {
    return dst.device == src.device ? CopyKind::kDeviceToDevice : CopyKind::kPeer;
  }
  if (dst.is_device) return CopyKind::kHostToDevice;
  if (src.is_device) return CopyKind::kDeviceToHost;
  return CopyKind::kHostToHost;
}

}  // namespace simgpu
