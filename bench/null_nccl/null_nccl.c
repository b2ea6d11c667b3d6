/* libnccl.so.2 that returns at once (bench only): the shim's NCCL hooks
   measured with nothing behind them. The handful of functions the hooks and
   the call loop use; a communicator is a static object. */
#include <nccl.h>

#define EXPORT __attribute__((visibility("default")))

static int fake_comm;

EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; ++i) id->internal[i] = (char)i;
  return ncclSuccess;
}
EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  (void)nranks, (void)id, (void)rank;
  *comm = (ncclComm_t)&fake_comm;
  return ncclSuccess;
}
EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) { (void)comm; *count = 1; return ncclSuccess; }
EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) { (void)comm; *rank = 0; return ncclSuccess; }
EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) { (void)comm; *device = 0; return ncclSuccess; }
EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) { (void)comm; return ncclSuccess; }
EXPORT ncclResult_t ncclAllReduce(const void* s, void* r, size_t n, ncclDataType_t t, ncclRedOp_t op, ncclComm_t c,
                                  cudaStream_t st) {
  (void)s, (void)r, (void)n, (void)t, (void)op, (void)c, (void)st;
  return ncclSuccess;
}
EXPORT ncclResult_t ncclGroupStart(void) { return ncclSuccess; }
EXPORT ncclResult_t ncclGroupEnd(void) { return ncclSuccess; }
EXPORT ncclResult_t ncclSend(const void* s, size_t n, ncclDataType_t t, int peer, ncclComm_t c, cudaStream_t st) {
  (void)s, (void)n, (void)t, (void)peer, (void)c, (void)st;
  return ncclSuccess;
}
EXPORT ncclResult_t ncclRecv(void* r, size_t n, ncclDataType_t t, int peer, ncclComm_t c, cudaStream_t st) {
  (void)r, (void)n, (void)t, (void)peer, (void)c, (void)st;
  return ncclSuccess;
}
