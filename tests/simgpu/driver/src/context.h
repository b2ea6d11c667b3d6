// Contexts: one primary context per device (retained/released by the runtime)
// plus contexts made by cuCtxCreate. Each thread has its own stack of current
// contexts, as in the real driver.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <vector>

#include "cuda_api.h"
#include "stream.h"

namespace simgpu {
struct Device;
}

struct CUctx_st {
  unsigned long long id = 0;
  simgpu::Device* device = nullptr;
  bool is_primary = false;

  // Primary: active while retained at least once. Created: from cuCtxCreate
  // until cuCtxDestroy. Objects are never freed, so a stale handle can be
  // recognized as destroyed instead of dereferenced after free.
  std::atomic<bool> active{false};
  std::atomic<bool> destroyed{false};
  // Bumped on every teardown so per-thread default streams of an earlier life of
  // the same (primary) context are not reused.
  std::atomic<uint64_t> generation{0};
  unsigned flags = 0;  // guarded by device->mutex for primaries

  // Orders submissions to this context's streams; guards `streams`, every
  // stream's `last_submitted`, and `legacy_stream`.
  std::mutex submit_mutex;
  std::vector<CUstream_st*> streams;  // live streams, legacy and per-thread ones included
  CUstream_st* legacy_stream = nullptr;

  std::mutex settings_mutex;
  std::set<CUctx_st*> peers;  // cuCtxEnablePeerAccess
  size_t limits[CU_LIMIT_MAX] = {};
  CUfunc_cache cache_config = CU_FUNC_CACHE_PREFER_NONE;
};

namespace simgpu {

// Makes a context usable: creates its legacy stream. Caller holds device->mutex.
void activate_context(CUctx_st* context, unsigned flags);

// Waits for all work, destroys every stream, frees every allocation and module
// the context owns. Caller holds device->mutex.
void teardown_context(CUctx_st* context);

// Waits until every operation already submitted to the context has completed.
void synchronize_context(CUctx_st* context);

// The calling thread's current context, or nullptr.
CUctx_st* current_context();

// CUDA_SUCCESS and the current context if there is a usable one; otherwise
// CUDA_ERROR_INVALID_CONTEXT (none / released) or CUDA_ERROR_CONTEXT_IS_DESTROYED.
CUresult require_current_context(CUctx_st*& context);

// CUDA_SUCCESS if `context` is a context handle that is usable now.
CUresult check_context(CUctx_st* context);

// The calling thread's stack of current contexts.
std::vector<CUctx_st*>& thread_context_stack();

// Which stream a NULL stream handle means for this entry point variant.
enum class NullStream { kLegacy, kPerThread };

// Resolves a stream handle as the API receives it (NULL, CU_STREAM_LEGACY,
// CU_STREAM_PER_THREAD or a created stream) to the stream object.
CUresult resolve_stream(CUstream handle, NullStream null_means, CUstream_st*& stream);

// The calling thread's per-thread default stream in `context`, created on first use.
CUstream_st* per_thread_stream(CUctx_st* context);

}  // namespace simgpu
