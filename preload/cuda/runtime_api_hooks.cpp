// Runtime copies, memsets, synchronization, streams and events. Each wrapper
// only attributes the driver call the runtime makes to the runtime API (see
// api_call.h); the per-thread variants are the names the headers map to
// under --default-stream per-thread.
#include <cuda_runtime_api.h>

#include "preload/cuda/hook_registry.h"
#include "preload/cuda/runtime_call.h"

extern "C" {
cudaError_t cudaMemcpy_ptds(void*, const void*, size_t, cudaMemcpyKind);
cudaError_t cudaMemcpyAsync_ptsz(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t);
cudaError_t cudaMemset_ptds(void*, int, size_t);
cudaError_t cudaMemsetAsync_ptsz(void*, int, size_t, cudaStream_t);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t);
cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t, cudaEvent_t, unsigned int);
cudaError_t cudaEventRecord_ptsz(cudaEvent_t, cudaStream_t);
}

namespace proflaunch::cuda {
namespace {

void* real_cudaMemcpy;
void* real_cudaMemcpy_ptds;
void* real_cudaMemcpyAsync;
void* real_cudaMemcpyAsync_ptsz;
void* real_cudaMemcpyPeer;
void* real_cudaMemcpyPeerAsync;
void* real_cudaMemset;
void* real_cudaMemset_ptds;
void* real_cudaMemsetAsync;
void* real_cudaMemsetAsync_ptsz;
void* real_cudaDeviceSynchronize;
void* real_cudaStreamSynchronize;
void* real_cudaStreamSynchronize_ptsz;
void* real_cudaEventSynchronize;
void* real_cudaStreamWaitEvent;
void* real_cudaStreamWaitEvent_ptsz;
void* real_cudaStreamCreate;
void* real_cudaStreamCreateWithFlags;
void* real_cudaStreamCreateWithPriority;
void* real_cudaStreamDestroy;
void* real_cudaEventCreate;
void* real_cudaEventCreateWithFlags;
void* real_cudaEventDestroy;
void* real_cudaEventRecord;
void* real_cudaEventRecord_ptsz;

constexpr uint16_t kSync = 0;
constexpr uint16_t kAsync = format::kApiAsync;
constexpr uint16_t kSyncPerThread = format::kApiPerThreadStream;
constexpr uint16_t kAsyncPerThread = format::kApiAsync | format::kApiPerThreadStream;

}  // namespace
}  // namespace proflaunch::cuda

namespace pc = proflaunch::cuda;

extern "C" {

// clang-format off
PROFLAUNCH_RUNTIME_HOOK(cudaMemcpy, cudaMemcpy, kCopy, kSync, nullptr, (void* d, const void* s, size_t n, cudaMemcpyKind k), (d, s, n, k))
PROFLAUNCH_RUNTIME_HOOK(cudaMemcpy_ptds, cudaMemcpy, kCopy, kSyncPerThread, nullptr, (void* d, const void* s, size_t n, cudaMemcpyKind k), (d, s, n, k))
PROFLAUNCH_RUNTIME_HOOK(cudaMemcpyAsync, cudaMemcpyAsync, kCopy, kAsync, nullptr, (void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t st), (d, s, n, k, st))
PROFLAUNCH_RUNTIME_HOOK(cudaMemcpyAsync_ptsz, cudaMemcpyAsync, kCopy, kAsyncPerThread, nullptr, (void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t st), (d, s, n, k, st))
PROFLAUNCH_RUNTIME_HOOK(cudaMemcpyPeer, cudaMemcpyPeer, kCopy, kSync, nullptr, (void* d, int dd, const void* s, int sd, size_t n), (d, dd, s, sd, n))
PROFLAUNCH_RUNTIME_HOOK(cudaMemcpyPeerAsync, cudaMemcpyPeerAsync, kCopy, kAsync, nullptr, (void* d, int dd, const void* s, int sd, size_t n, cudaStream_t st), (d, dd, s, sd, n, st))
PROFLAUNCH_RUNTIME_HOOK(cudaMemset, cudaMemset, kSet, kSync, nullptr, (void* d, int v, size_t n), (d, v, n))
PROFLAUNCH_RUNTIME_HOOK(cudaMemset_ptds, cudaMemset, kSet, kSyncPerThread, nullptr, (void* d, int v, size_t n), (d, v, n))
PROFLAUNCH_RUNTIME_HOOK(cudaMemsetAsync, cudaMemsetAsync, kSet, kAsync, nullptr, (void* d, int v, size_t n, cudaStream_t st), (d, v, n, st))
PROFLAUNCH_RUNTIME_HOOK(cudaMemsetAsync_ptsz, cudaMemsetAsync, kSet, kAsyncPerThread, nullptr, (void* d, int v, size_t n, cudaStream_t st), (d, v, n, st))
PROFLAUNCH_RUNTIME_HOOK(cudaDeviceSynchronize, cudaDeviceSynchronize, kSync, kSync, nullptr, (), ())
PROFLAUNCH_RUNTIME_HOOK(cudaStreamSynchronize, cudaStreamSynchronize, kSync, kSync, nullptr, (cudaStream_t st), (st))
PROFLAUNCH_RUNTIME_HOOK(cudaStreamSynchronize_ptsz, cudaStreamSynchronize, kSync, kSyncPerThread, nullptr, (cudaStream_t st), (st))
PROFLAUNCH_RUNTIME_HOOK(cudaEventSynchronize, cudaEventSynchronize, kSync, kSync, nullptr, (cudaEvent_t e), (e))
PROFLAUNCH_RUNTIME_HOOK(cudaStreamWaitEvent, cudaStreamWaitEvent, kSync, kSync, nullptr, (cudaStream_t st, cudaEvent_t e, unsigned int f), (st, e, f))
PROFLAUNCH_RUNTIME_HOOK(cudaStreamWaitEvent_ptsz, cudaStreamWaitEvent, kSync, kSyncPerThread, nullptr, (cudaStream_t st, cudaEvent_t e, unsigned int f), (st, e, f))
PROFLAUNCH_RUNTIME_HOOK(cudaStreamCreate, cudaStreamCreate, kStreamObject, kSync, nullptr, (cudaStream_t* st), (st))
PROFLAUNCH_RUNTIME_HOOK(cudaStreamCreateWithFlags, cudaStreamCreateWithFlags, kStreamObject, kSync, nullptr, (cudaStream_t* st, unsigned int f), (st, f))
PROFLAUNCH_RUNTIME_HOOK(cudaStreamCreateWithPriority, cudaStreamCreateWithPriority, kStreamObject, kSync, nullptr, (cudaStream_t* st, unsigned int f, int p), (st, f, p))
PROFLAUNCH_RUNTIME_HOOK(cudaStreamDestroy, cudaStreamDestroy, kStreamObject, kSync, nullptr, (cudaStream_t st), (st))
PROFLAUNCH_RUNTIME_HOOK(cudaEventCreate, cudaEventCreate, kEventObject, kSync, nullptr, (cudaEvent_t* e), (e))
PROFLAUNCH_RUNTIME_HOOK(cudaEventCreateWithFlags, cudaEventCreateWithFlags, kEventObject, kSync, nullptr, (cudaEvent_t* e, unsigned int f), (e, f))
PROFLAUNCH_RUNTIME_HOOK(cudaEventDestroy, cudaEventDestroy, kEventObject, kSync, nullptr, (cudaEvent_t e), (e))
PROFLAUNCH_RUNTIME_HOOK(cudaEventRecord, cudaEventRecord, kEventRecord, kAsync, nullptr, (cudaEvent_t e, cudaStream_t st), (e, st))
PROFLAUNCH_RUNTIME_HOOK(cudaEventRecord_ptsz, cudaEventRecord, kEventRecord, kAsyncPerThread, nullptr, (cudaEvent_t e, cudaStream_t st), (e, st))
// clang-format on

}  // extern "C"

namespace proflaunch::cuda {

HookFamily runtime_api_hooks() {
#define PROFLAUNCH_RUNTIME_ROW(symbol, per_thread) \
  PROFLAUNCH_HOOK(symbol, nullptr, 0, per_thread, kRuntimeLibrary, real_##symbol)
  static const intercept::HookEntry kHooks[] = {
      PROFLAUNCH_RUNTIME_ROW(cudaMemcpy, false),
      PROFLAUNCH_RUNTIME_ROW(cudaMemcpy_ptds, true),
      PROFLAUNCH_RUNTIME_ROW(cudaMemcpyAsync, false),
      PROFLAUNCH_RUNTIME_ROW(cudaMemcpyAsync_ptsz, true),
      PROFLAUNCH_RUNTIME_ROW(cudaMemcpyPeer, false),
      PROFLAUNCH_RUNTIME_ROW(cudaMemcpyPeerAsync, false),
      PROFLAUNCH_RUNTIME_ROW(cudaMemset, false),
      PROFLAUNCH_RUNTIME_ROW(cudaMemset_ptds, true),
      PROFLAUNCH_RUNTIME_ROW(cudaMemsetAsync, false),
      PROFLAUNCH_RUNTIME_ROW(cudaMemsetAsync_ptsz, true),
      PROFLAUNCH_RUNTIME_ROW(cudaDeviceSynchronize, false),
      PROFLAUNCH_RUNTIME_ROW(cudaStreamSynchronize, false),
      PROFLAUNCH_RUNTIME_ROW(cudaStreamSynchronize_ptsz, true),
      PROFLAUNCH_RUNTIME_ROW(cudaEventSynchronize, false),
      PROFLAUNCH_RUNTIME_ROW(cudaStreamWaitEvent, false),
      PROFLAUNCH_RUNTIME_ROW(cudaStreamWaitEvent_ptsz, true),
      PROFLAUNCH_RUNTIME_ROW(cudaStreamCreate, false),
      PROFLAUNCH_RUNTIME_ROW(cudaStreamCreateWithFlags, false),
      PROFLAUNCH_RUNTIME_ROW(cudaStreamCreateWithPriority, false),
      PROFLAUNCH_RUNTIME_ROW(cudaStreamDestroy, false),
      PROFLAUNCH_RUNTIME_ROW(cudaEventCreate, false),
      PROFLAUNCH_RUNTIME_ROW(cudaEventCreateWithFlags, false),
      PROFLAUNCH_RUNTIME_ROW(cudaEventDestroy, false),
      PROFLAUNCH_RUNTIME_ROW(cudaEventRecord, false),
      PROFLAUNCH_RUNTIME_ROW(cudaEventRecord_ptsz, true),
  };
#undef PROFLAUNCH_RUNTIME_ROW
  return {kHooks, std::size(kHooks)};
}

}  // namespace proflaunch::cuda
