// Collectives and point-to-point calls: ncclAllReduce ... ncclSend, ncclRecv.
//
// Outside a group, the call's kernel is launched inside the call: the hook
// records a GPU start event on the stream and opens a library frame
// (preload/cuda/library_frame.h), so the launch record carries this call's
// correlation id and its GpuActivity starts when the stream reached the
// collective. Inside a group nothing is launched until the outermost
// ncclGroupEnd (group_hooks.cpp); the member only notes its stream.
#include <nccl.h>

#include "preload/cuda/api_call.h"
#include "preload/cuda/current_context.h"
#include "preload/cuda/library_frame.h"
#if PROFLAUNCH_HIP
#include "preload/hip/hip_library_frame.h"
#endif
#include "preload/nccl/comm_registry.h"
#include "preload/nccl/nccl_call.h"
#include "preload/nccl/nccl_hooks.h"

namespace proflaunch::nccl {

__thread __attribute__((tls_model("initial-exec"))) uint32_t tls_nccl_depth;
__thread __attribute__((tls_model("initial-exec"))) GroupState tls_group;

void GroupState::note_member(CUstream runs_on, uint64_t stream, CUcontext context, int32_t device) noexcept {
  for (uint32_t i = 0; i < stream_count; ++i) {
    if (streams[i].runs_on == runs_on) {
      ++streams[i].members;
      return;
    }
  }
  if (stream_count < kMaxGroupStreams) streams[stream_count++] = GroupStream{runs_on, stream, context, device, 1};
}

namespace {

using format::CollectiveOp;

constexpr uint8_t kNoReduction = 255;

size_t datatype_bytes(ncclDataType_t datatype) {
  switch (datatype) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;
  }
}

struct CollectiveCall {
  NcclApi api;
  CollectiveOp op;
  ncclComm_t comm;
  size_t count;
  ncclDataType_t datatype;
  uint8_t reduction;
  int32_t root;
  cudaStream_t stream;
};

// The per-rank numbering that makes (comm_id, sequence) name the same
// operation on every rank. Only calls NCCL accepted count.
uint64_t next_sequence(CommInfo& info, const CollectiveCall& call) {
  const bool p2p = call.op == CollectiveOp::kSend || call.op == CollectiveOp::kRecv;
  if (!p2p) return info.collectives.fetch_add(1, std::memory_order_relaxed) + 1;
  if (call.root < 0 || call.root >= kMaxTrackedPeers) return 0;
  auto& counter = call.op == CollectiveOp::kSend ? info.sends[call.root] : info.receives[call.root];
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

template <typename CallReal>
ncclResult_t traced_collective(const CollectiveCall& call, CallReal&& call_real) {
  if (!nccl_recording()) return call_real();
  NcclCallScope scope;
  CommInfo* info = find_comm(call.comm);
  const auto runs_on = cuda::effective_stream(reinterpret_cast<CUstream>(call.stream), false);
  const uint64_t stream = cuda::stream_handle(reinterpret_cast<CUstream>(call.stream), false);
  const int32_t device = info != nullptr ? info->device : -1;
  const uint64_t begin = now_ticks();
  const uint64_t correlation = next_correlation_id();
  GroupState& group = tls_group;
  // The kernel is launched in this call only outside a group; its start
  // event can be recorded only in the current context (the event pool's).
  CUcontext current = nullptr;
  if (group.depth == 0 && info != nullptr && info->context != nullptr) cuda::current_device(&current);
  const bool framed = current != nullptr && info->context == current;
  cuda::LibraryFrame& frame = cuda::tls_library_frame;
  if (framed) {
    frame.entries[0] = cuda::LibraryFrameEntry::make(runs_on, correlation, cuda::library_frame_start(runs_on, current));
    frame.count = 1;
  }
#if PROFLAUNCH_HIP
  // RCCL launches through HIP: the same frame, on the HIP side.
  const bool hip_framed = group.depth == 0 && info != nullptr && info->library == format::CollectiveLibrary::kRccl;
  if (hip_framed) hip::open_library_frame(call.stream, correlation);
#endif
  const ncclResult_t result = call_real();
#if PROFLAUNCH_HIP
  if (hip_framed) hip::close_library_frame();
#endif
  if (framed) {
    frame.count = 0;
    if (!frame.entries[0].taken)  // nothing was launched: give the start event back
      {
      const cuda::TimingToken start = frame.entries[0].start();
      cuda::owner_of(start).release(start);
    }
  }
  if (group.depth > 0 && result == ncclSuccess)
    group.note_member(runs_on, stream, info != nullptr ? info->context : nullptr, device);
  if (auto* record = emit<format::CollectiveRecord>()) {
    record->device = device;
    record->span = {begin, now_ticks(), correlation, static_cast<int32_t>(result), static_cast<uint16_t>(call.api),
                    format::kApiAsync};
    record->comm = reinterpret_cast<uint64_t>(call.comm);
    record->comm_id = info != nullptr ? info->comm_id : 0;
    record->sequence = (info != nullptr && result == ncclSuccess) ? next_sequence(*info, call) : 0;
    record->count = call.count;
    record->bytes = call.count * datatype_bytes(call.datatype);
    record->stream = stream;
    record->group_id = group.depth > 0 ? group.group_id : 0;
    record->root = call.root;
    record->rank = info != nullptr ? info->rank : -1;
    record->nranks = info != nullptr ? info->nranks : -1;
    record->op = static_cast<uint8_t>(call.op);
    record->datatype = static_cast<uint8_t>(call.datatype);
    record->reduction = call.reduction;
    record->group_depth = static_cast<uint8_t>(group.depth > 255 ? 255 : group.depth);
    commit();
  }
  return result;
}

void* real_ncclAllReduce;
void* real_ncclBroadcast;
void* real_ncclBcast;
void* real_ncclReduce;
void* real_ncclAllGather;
void* real_ncclReduceScatter;
void* real_ncclAlltoAll;
void* real_ncclGather;
void* real_ncclScatter;
void* real_ncclSend;
void* real_ncclRecv;

}  // namespace
}  // namespace proflaunch::nccl

namespace pn = proflaunch::nccl;
using pn::CollectiveCall;
using pn::NcclApi;
using proflaunch::format::CollectiveOp;

#define PROFLAUNCH_NCCL_REAL(symbol) \
  ::proflaunch::hooks::real_function<decltype(::symbol)>(pn::real_##symbol, #symbol, pn::kNcclLibrary)

extern "C" {

PROFLAUNCH_EXPORT ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t type,
                                             ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  auto* real = PROFLAUNCH_NCCL_REAL(ncclAllReduce);
  if (real == nullptr) return ncclSystemError;
  const CollectiveCall call{NcclApi::ncclAllReduce, CollectiveOp::kAllReduce, comm, count, type,
                            static_cast<uint8_t>(op), -1, stream};
  return pn::traced_collective(call, [&] { return real(send, recv, count, type, op, comm, stream); });
}

PROFLAUNCH_EXPORT ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                                             ncclComm_t comm, cudaStream_t stream) {
  auto* real = PROFLAUNCH_NCCL_REAL(ncclBroadcast);
  if (real == nullptr) return ncclSystemError;
  const CollectiveCall call{NcclApi::ncclBroadcast, CollectiveOp::kBroadcast, comm, count, type, pn::kNoReduction,
                            root, stream};
  return pn::traced_collective(call, [&] { return real(send, recv, count, type, root, comm, stream); });
}

PROFLAUNCH_EXPORT ncclResult_t ncclBcast(void* buffer, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                                         cudaStream_t stream) {
  auto* real = PROFLAUNCH_NCCL_REAL(ncclBcast);
  if (real == nullptr) return ncclSystemError;
  const CollectiveCall call{NcclApi::ncclBcast, CollectiveOp::kBroadcast, comm, count, type, pn::kNoReduction, root,
                            stream};
  return pn::traced_collective(call, [&] { return real(buffer, count, type, root, comm, stream); });
}

PROFLAUNCH_EXPORT ncclResult_t ncclReduce(const void* send, void* recv, size_t count, ncclDataType_t type,
                                          ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  auto* real = PROFLAUNCH_NCCL_REAL(ncclReduce);
  if (real == nullptr) return ncclSystemError;
  const CollectiveCall call{NcclApi::ncclReduce, CollectiveOp::kReduce, comm, count, type, static_cast<uint8_t>(op),
                            root, stream};
  return pn::traced_collective(call, [&] { return real(send, recv, count, type, op, root, comm, stream); });
}

PROFLAUNCH_EXPORT ncclResult_t ncclAllGather(const void* send, void* recv, size_t sendcount, ncclDataType_t type,
                                             ncclComm_t comm, cudaStream_t stream) {
  auto* real = PROFLAUNCH_NCCL_REAL(ncclAllGather);
  if (real == nullptr) return ncclSystemError;
  const CollectiveCall call{NcclApi::ncclAllGather, CollectiveOp::kAllGather, comm, sendcount, type,
                            pn::kNoReduction, -1, stream};
  return pn::traced_collective(call, [&] { return real(send, recv, sendcount, type, comm, stream); });
}

PROFLAUNCH_EXPORT ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t recvcount, ncclDataType_t type,
                                                 ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  auto* real = PROFLAUNCH_NCCL_REAL(ncclReduceScatter);
  if (real == nullptr) return ncclSystemError;
  const CollectiveCall call{NcclApi::ncclReduceScatter, CollectiveOp::kReduceScatter, comm, recvcount, type,
                            static_cast<uint8_t>(op), -1, stream};
  return pn::traced_collective(call, [&] { return real(send, recv, recvcount, type, op, comm, stream); });
}

PROFLAUNCH_EXPORT ncclResult_t ncclAlltoAll(const void* send, void* recv, size_t count, ncclDataType_t type,
                                            ncclComm_t comm, cudaStream_t stream) {
  auto* real = PROFLAUNCH_NCCL_REAL(ncclAlltoAll);
  if (real == nullptr) return ncclSystemError;
  const CollectiveCall call{NcclApi::ncclAlltoAll, CollectiveOp::kAlltoAll, comm, count, type, pn::kNoReduction, -1,
                            stream};
  return pn::traced_collective(call, [&] { return real(send, recv, count, type, comm, stream); });
}

PROFLAUNCH_EXPORT ncclResult_t ncclGather(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                                          ncclComm_t comm, cudaStream_t stream) {
  auto* real = PROFLAUNCH_NCCL_REAL(ncclGather);
  if (real == nullptr) return ncclSystemError;
  const CollectiveCall call{NcclApi::ncclGather, CollectiveOp::kGather, comm, count, type, pn::kNoReduction, root,
                            stream};
  return pn::traced_collective(call, [&] { return real(send, recv, count, type, root, comm, stream); });
}

PROFLAUNCH_EXPORT ncclResult_t ncclScatter(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                                           ncclComm_t comm, cudaStream_t stream) {
  auto* real = PROFLAUNCH_NCCL_REAL(ncclScatter);
  if (real == nullptr) return ncclSystemError;
  const CollectiveCall call{NcclApi::ncclScatter, CollectiveOp::kScatter, comm, count, type, pn::kNoReduction, root,
                            stream};
  return pn::traced_collective(call, [&] { return real(send, recv, count, type, root, comm, stream); });
}

PROFLAUNCH_EXPORT ncclResult_t ncclSend(const void* send, size_t count, ncclDataType_t type, int peer,
                                        ncclComm_t comm, cudaStream_t stream) {
  auto* real = PROFLAUNCH_NCCL_REAL(ncclSend);
  if (real == nullptr) return ncclSystemError;
  const CollectiveCall call{NcclApi::ncclSend, CollectiveOp::kSend, comm, count, type, pn::kNoReduction, peer, stream};
  return pn::traced_collective(call, [&] { return real(send, count, type, peer, comm, stream); });
}

PROFLAUNCH_EXPORT ncclResult_t ncclRecv(void* recv, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                                        cudaStream_t stream) {
  auto* real = PROFLAUNCH_NCCL_REAL(ncclRecv);
  if (real == nullptr) return ncclSystemError;
  const CollectiveCall call{NcclApi::ncclRecv, CollectiveOp::kRecv, comm, count, type, pn::kNoReduction, peer, stream};
  return pn::traced_collective(call, [&] { return real(recv, count, type, peer, comm, stream); });
}

}  // extern "C"

namespace proflaunch::nccl {

#define PROFLAUNCH_NCCL_HOOK(symbol) PROFLAUNCH_HOOK(symbol, nullptr, 0, false, kNcclLibrary, real_##symbol)

hooks::HookFamily nccl_collective_hooks() {
  static const intercept::HookEntry kHooks[] = {
      PROFLAUNCH_NCCL_HOOK(ncclAllReduce), PROFLAUNCH_NCCL_HOOK(ncclBroadcast), PROFLAUNCH_NCCL_HOOK(ncclBcast),
      PROFLAUNCH_NCCL_HOOK(ncclReduce),    PROFLAUNCH_NCCL_HOOK(ncclAllGather), PROFLAUNCH_NCCL_HOOK(ncclReduceScatter),
      PROFLAUNCH_NCCL_HOOK(ncclAlltoAll),  PROFLAUNCH_NCCL_HOOK(ncclGather),    PROFLAUNCH_NCCL_HOOK(ncclScatter),
      PROFLAUNCH_NCCL_HOOK(ncclSend),      PROFLAUNCH_NCCL_HOOK(ncclRecv),
  };
  return {kHooks, std::size(kHooks)};
}

}  // namespace proflaunch::nccl
