// The exported API. Like the real libnccl.so.2: unversioned symbols, each a
// strong pncclX (the profiling interface) with a weak ncclX alias to it.
#include <nccl.h>

#include <cstring>

#include "comm.h"
#include "enqueue.h"

#define SIMNCCL_EXPORT __attribute__((visibility("default")))
// ncclX: a weak alias of pncclX, as in the real library.
#define SIMNCCL_WEAK_ALIAS(name) __attribute__((visibility("default"), weak, alias("p" #name)))

using namespace simnccl;

namespace {


Operation make(OpKind kind, const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
               int root, ncclComm_t comm, cudaStream_t stream) {
  CommState* state = comm_state(comm);
  return Operation{kind, send, recv, count, type, op, root,
                   state != nullptr ? comm->state : nullptr, reinterpret_cast<CUstream>(stream)};
}

ncclResult_t checked(ncclComm_t comm) {
  if (comm_state(comm) == nullptr) {
    set_last_error("invalid communicator");
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

}  // namespace

extern "C" {

SIMNCCL_EXPORT ncclResult_t pncclGetVersion(int* version) {
  if (version == nullptr) return ncclInvalidArgument;
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}
ncclResult_t ncclGetVersion(int* version) SIMNCCL_WEAK_ALIAS(ncclGetVersion);

SIMNCCL_EXPORT ncclResult_t pncclGetUniqueId(ncclUniqueId* id) { return make_unique_id(id); }
ncclResult_t ncclGetUniqueId(ncclUniqueId* id) SIMNCCL_WEAK_ALIAS(ncclGetUniqueId);

SIMNCCL_EXPORT ncclResult_t pncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  return init_rank(comm, nranks, id, rank, -1);
}
ncclResult_t ncclCommInitRank(ncclComm_t*, int, ncclUniqueId, int) SIMNCCL_WEAK_ALIAS(ncclCommInitRank);

SIMNCCL_EXPORT ncclResult_t pncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                                   ncclConfig_t* config) {
  if (config != nullptr && config->magic != 0xcafebeef) {
    set_last_error("ncclConfig_t not initialized with NCCL_CONFIG_INITIALIZER");
    return ncclInvalidArgument;
  }
  return init_rank(comm, nranks, id, rank, -1);
}
ncclResult_t ncclCommInitRankConfig(ncclComm_t*, int, ncclUniqueId, int, ncclConfig_t*)
    SIMNCCL_WEAK_ALIAS(ncclCommInitRankConfig);

SIMNCCL_EXPORT ncclResult_t pncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  return init_all(comms, ndev, devlist);
}
ncclResult_t ncclCommInitAll(ncclComm_t*, int, const int*) SIMNCCL_WEAK_ALIAS(ncclCommInitAll);

SIMNCCL_EXPORT ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                          ncclConfig_t*) {
  if (ncclResult_t r = checked(comm); r != ncclSuccess) return r;
  return split(comm, color, key, newcomm);
}
ncclResult_t ncclCommSplit(ncclComm_t, int, int, ncclComm_t*, ncclConfig_t*) SIMNCCL_WEAK_ALIAS(ncclCommSplit);

SIMNCCL_EXPORT ncclResult_t pncclCommFinalize(ncclComm_t comm) { return checked(comm); }
ncclResult_t ncclCommFinalize(ncclComm_t) SIMNCCL_WEAK_ALIAS(ncclCommFinalize);

SIMNCCL_EXPORT ncclResult_t pncclCommDestroy(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  if (ncclResult_t r = checked(comm); r != ncclSuccess) return r;
  return destroy(comm, false);
}
ncclResult_t ncclCommDestroy(ncclComm_t) SIMNCCL_WEAK_ALIAS(ncclCommDestroy);

SIMNCCL_EXPORT ncclResult_t pncclCommAbort(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  if (ncclResult_t r = checked(comm); r != ncclSuccess) return r;
  return destroy(comm, true);
}
ncclResult_t ncclCommAbort(ncclComm_t) SIMNCCL_WEAK_ALIAS(ncclCommAbort);

SIMNCCL_EXPORT ncclResult_t pncclCommCount(const ncclComm_t comm, int* count) {
  if (ncclResult_t r = checked(comm); r != ncclSuccess || count == nullptr) return r ? r : ncclInvalidArgument;
  *count = comm->state->nranks;
  return ncclSuccess;
}
ncclResult_t ncclCommCount(const ncclComm_t, int*) SIMNCCL_WEAK_ALIAS(ncclCommCount);

SIMNCCL_EXPORT ncclResult_t pncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (ncclResult_t r = checked(comm); r != ncclSuccess || rank == nullptr) return r ? r : ncclInvalidArgument;
  *rank = comm->state->rank;
  return ncclSuccess;
}
ncclResult_t ncclCommUserRank(const ncclComm_t, int*) SIMNCCL_WEAK_ALIAS(ncclCommUserRank);

SIMNCCL_EXPORT ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (ncclResult_t r = checked(comm); r != ncclSuccess || device == nullptr) return r ? r : ncclInvalidArgument;
  *device = comm->state->device;
  return ncclSuccess;
}
ncclResult_t ncclCommCuDevice(const ncclComm_t, int*) SIMNCCL_WEAK_ALIAS(ncclCommCuDevice);

SIMNCCL_EXPORT ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* error) {
  if (ncclResult_t r = checked(comm); r != ncclSuccess || error == nullptr) return r ? r : ncclInvalidArgument;
  *error = ncclResult_t(comm->state->async_error.load());
  return ncclSuccess;
}
ncclResult_t ncclCommGetAsyncError(ncclComm_t, ncclResult_t*) SIMNCCL_WEAK_ALIAS(ncclCommGetAsyncError);

SIMNCCL_EXPORT const char* pncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}
const char* ncclGetErrorString(ncclResult_t) SIMNCCL_WEAK_ALIAS(ncclGetErrorString);

SIMNCCL_EXPORT const char* pncclGetLastError(ncclComm_t) {
  // Like NCCL: one process-wide message, overwritten by the next failure.
  static thread_local std::string copy;
  copy = last_error();
  return copy.c_str();
}
const char* ncclGetLastError(ncclComm_t) SIMNCCL_WEAK_ALIAS(ncclGetLastError);

SIMNCCL_EXPORT ncclResult_t pncclGroupStart() { return group_start(); }
ncclResult_t ncclGroupStart() SIMNCCL_WEAK_ALIAS(ncclGroupStart);
SIMNCCL_EXPORT ncclResult_t pncclGroupEnd() { return group_end(); }
ncclResult_t ncclGroupEnd() SIMNCCL_WEAK_ALIAS(ncclGroupEnd);

SIMNCCL_EXPORT ncclResult_t pncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t type,
                                          ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return submit(make(OpKind::kAllReduce, send, recv, count, type, op, 0, comm, stream));
}
ncclResult_t ncclAllReduce(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t)
    SIMNCCL_WEAK_ALIAS(ncclAllReduce);

SIMNCCL_EXPORT ncclResult_t pncclBroadcast(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                                          ncclComm_t comm, cudaStream_t stream) {
  return submit(make(OpKind::kBroadcast, send, recv, count, type, ncclSum, root, comm, stream));
}
ncclResult_t ncclBroadcast(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t)
    SIMNCCL_WEAK_ALIAS(ncclBroadcast);

SIMNCCL_EXPORT ncclResult_t pncclBcast(void* buffer, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                                      cudaStream_t stream) {
  return submit(make(OpKind::kBroadcast, buffer, buffer, count, type, ncclSum, root, comm, stream));
}
ncclResult_t ncclBcast(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) SIMNCCL_WEAK_ALIAS(ncclBcast);

SIMNCCL_EXPORT ncclResult_t pncclReduce(const void* send, void* recv, size_t count, ncclDataType_t type,
                                       ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return submit(make(OpKind::kReduce, send, recv, count, type, op, root, comm, stream));
}
ncclResult_t ncclReduce(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t, cudaStream_t)
    SIMNCCL_WEAK_ALIAS(ncclReduce);

SIMNCCL_EXPORT ncclResult_t pncclAllGather(const void* send, void* recv, size_t sendcount, ncclDataType_t type,
                                          ncclComm_t comm, cudaStream_t stream) {
  return submit(make(OpKind::kAllGather, send, recv, sendcount, type, ncclSum, 0, comm, stream));
}
ncclResult_t ncclAllGather(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t)
    SIMNCCL_WEAK_ALIAS(ncclAllGather);

SIMNCCL_EXPORT ncclResult_t pncclReduceScatter(const void* send, void* recv, size_t recvcount, ncclDataType_t type,
                                              ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return submit(make(OpKind::kReduceScatter, send, recv, recvcount, type, op, 0, comm, stream));
}
ncclResult_t ncclReduceScatter(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t)
    SIMNCCL_WEAK_ALIAS(ncclReduceScatter);

SIMNCCL_EXPORT ncclResult_t pncclAlltoAll(const void* send, void* recv, size_t count, ncclDataType_t type,
                                         ncclComm_t comm, cudaStream_t stream) {
  return submit(make(OpKind::kAlltoAll, send, recv, count, type, ncclSum, 0, comm, stream));
}
ncclResult_t ncclAlltoAll(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t)
    SIMNCCL_WEAK_ALIAS(ncclAlltoAll);

SIMNCCL_EXPORT ncclResult_t pncclGather(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                                       ncclComm_t comm, cudaStream_t stream) {
  return submit(make(OpKind::kGather, send, recv, count, type, ncclSum, root, comm, stream));
}
ncclResult_t ncclGather(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t)
    SIMNCCL_WEAK_ALIAS(ncclGather);

SIMNCCL_EXPORT ncclResult_t pncclScatter(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                                        ncclComm_t comm, cudaStream_t stream) {
  return submit(make(OpKind::kScatter, send, recv, count, type, ncclSum, root, comm, stream));
}
ncclResult_t ncclScatter(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t)
    SIMNCCL_WEAK_ALIAS(ncclScatter);

SIMNCCL_EXPORT ncclResult_t pncclSend(const void* send, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                                     cudaStream_t stream) {
  return submit(make(OpKind::kSend, send, nullptr, count, type, ncclSum, peer, comm, stream));
}
ncclResult_t ncclSend(const void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) SIMNCCL_WEAK_ALIAS(ncclSend);

SIMNCCL_EXPORT ncclResult_t pncclRecv(void* recv, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                                     cudaStream_t stream) {
  return submit(make(OpKind::kRecv, nullptr, recv, count, type, ncclSum, peer, comm, stream));
}
ncclResult_t ncclRecv(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) SIMNCCL_WEAK_ALIAS(ncclRecv);

}  // extern "C"
