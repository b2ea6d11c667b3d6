#include "context.h"

#include <map>
#include <utility>

#include "api_guard.h"
#include "driver_state.h"
#include "memory.h"
#include "module.h"
#include "tools.h"

namespace simgpu {
namespace {

// The calling thread's per-thread default streams, by context, with the context
// generation they were made in. Destroyed when the thread exits, unless the
// context was torn down since (teardown destroyed them already).
struct PerThreadStreams {
  std::map<CUctx_st*, std::pair<uint64_t, CUstream_st*>> by_context;

  ~PerThreadStreams() {
    // A fork child of an initialized parent must not touch the parent's state.
    if (driver_ready() != CUDA_SUCCESS) return;
    for (auto& [context, entry] : by_context) {
      auto [generation, stream] = entry;
      bool still_alive = false;
      {
        std::lock_guard lock(context->submit_mutex);
        still_alive = context->generation.load() == generation;
        if (still_alive) detach_stream_locked(stream);
      }
      if (still_alive) close_stream(stream);
    }
  }
};

thread_local PerThreadStreams t_per_thread_streams;
thread_local std::vector<CUctx_st*> t_context_stack;

}  // namespace

std::vector<CUctx_st*>& thread_context_stack() { return t_context_stack; }

CUctx_st* current_context() { return t_context_stack.empty() ? nullptr : t_context_stack.back(); }

CUresult check_context(CUctx_st* context) {
  if (!context || !state().contexts.contains(context)) return CUDA_ERROR_INVALID_CONTEXT;
  if (context->destroyed.load()) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  if (!context->active.load()) return CUDA_ERROR_INVALID_CONTEXT;
  return CUDA_SUCCESS;
}

CUresult require_current_context(CUctx_st*& context) {
  context = current_context();
  return check_context(context);
}

void activate_context(CUctx_st* context, unsigned flags) {
  context->flags = flags;
  {
    std::lock_guard lock(context->settings_mutex);
    for (size_t& limit : context->limits) limit = 0;
    context->limits[CU_LIMIT_STACK_SIZE] = 1024;
    context->limits[CU_LIMIT_PRINTF_FIFO_SIZE] = 1 << 20;
    context->limits[CU_LIMIT_MALLOC_HEAP_SIZE] = 8 << 20;
    context->limits[CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT] = 2048;
    context->limits[CU_LIMIT_MAX_L2_FETCH_GRANULARITY] = 64;
    context->peers.clear();
    context->cache_config = CU_FUNC_CACHE_PREFER_NONE;
  }
  context->active.store(true);
  tools::resource(SIMGPU_TOOLS_CONTEXT_CREATED, context, nullptr);
  create_stream(context, StreamKind::kLegacy, 0, 0);
}

void synchronize_context(CUctx_st* context) {
  std::vector<CompletionRef> pending;
  {
    std::lock_guard lock(context->submit_mutex);
    for (CUstream_st* stream : context->streams) {
      if (stream->last_submitted) pending.push_back(stream->last_submitted);
    }
  }
  for (const CompletionRef& completion : pending) completion->wait();
}

void teardown_context(CUctx_st* context) {
  synchronize_context(context);
  tools::resource(SIMGPU_TOOLS_CONTEXT_DESTROYING, context, nullptr);
  context->active.store(false);
  std::vector<CUstream_st*> streams;
  {
    std::lock_guard lock(context->submit_mutex);
    context->generation.fetch_add(1);
    streams.swap(context->streams);
    context->legacy_stream = nullptr;
  }
  for (CUstream_st* stream : streams) close_stream(stream);
  unload_modules_of_context(context);
  free_memory_of_context(context);
}

CUstream_st* per_thread_stream(CUctx_st* context) {
  uint64_t generation = context->generation.load();
  auto& entry = t_per_thread_streams.by_context[context];
  if (entry.second && entry.first == generation) return entry.second;
  entry = {generation, create_stream(context, StreamKind::kPerThread, 0, 0)};
  return entry.second;
}

CUresult resolve_stream(CUstream handle, NullStream null_means, CUstream_st*& stream) {
  if (handle == nullptr || handle == CU_STREAM_LEGACY || handle == CU_STREAM_PER_THREAD) {
    CUctx_st* context = nullptr;
    if (CUresult result = require_current_context(context); result != CUDA_SUCCESS) return result;
    bool per_thread = handle == CU_STREAM_PER_THREAD || (handle == nullptr && null_means == NullStream::kPerThread);
    if (per_thread) {
      stream = per_thread_stream(context);
    } else {
      std::lock_guard lock(context->submit_mutex);
      stream = context->legacy_stream;
    }
    return stream ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
  }
  if (!state().streams.contains(handle)) return CUDA_ERROR_INVALID_HANDLE;
  stream = handle;
  return check_context(stream->context) == CUDA_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

}  // namespace simgpu
