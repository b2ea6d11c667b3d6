#include "stream.h"

#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>

#include <algorithm>
#include <thread>

#include "capture.h"
#include "clock.h"
#include "context.h"
#include "device_telemetry.h"
#include "driver_state.h"
#include "tools.h"

namespace simgpu {
namespace {

void mark_complete(Completion& completion, int64_t start_ns, int64_t end_ns) {
  completion.start_ns = start_ns;
  completion.end_ns = end_ns;
  completion.done.store(1, std::memory_order_release);
  completion.done.notify_all();
}

void run_stream_worker(CUstream_st* stream, int64_t launch_latency_ns) {
  // Default timer slack (50 us) would stretch every short kernel; the modelled
  // durations go down to a few microseconds.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  int64_t previous_end_ns = 0;
  for (;;) {
    StreamOperation op;
    {
      std::unique_lock lock(stream->queue_mutex);
      stream->queue_cv.wait(lock, [&] { return !stream->queue.empty() || stream->closing; });
      if (stream->queue.empty()) break;  // destroyed and drained
      op = std::move(stream->queue.front());
      stream->queue.pop_front();
    }
    int64_t start_ns = std::max(op.submit_ns + launch_latency_ns, previous_end_ns);
    for (const CompletionRef& dependency : op.waits) {
      dependency->wait();
      start_ns = std::max(start_ns, dependency->end_ns);
    }
    if (op.started) {
      sleep_until_monotonic_ns(start_ns);
      mark_complete(*op.started, start_ns, start_ns);
    }
    if (stream->context != nullptr && stream->context->device != nullptr)
      telemetry_work(*stream->context->device, op, start_ns, start_ns + op.duration_ns);
    if (op.effect) op.effect();
    int64_t end_ns = start_ns + op.duration_ns;
    if (op.effect_time_counts) end_ns = std::max(end_ns, monotonic_now_ns());
    sleep_until_monotonic_ns(end_ns);
    previous_end_ns = end_ns;
    // A tool hears of the work before anyone can observe it complete.
    tools::work_completed(op, stream, start_ns, end_ns);
    mark_complete(*op.completion, start_ns, end_ns);
  }
  delete stream;
}

// Workers never take signals meant for the program (Python, for one, expects
// SIGINT on its main thread), and are detached: the process may exit while
// they still sleep through modelled work, as with the real driver.
void start_worker(CUstream_st* stream) {
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  int64_t launch_latency_ns = state().config.launch_latency_ns;
  try {
    std::thread(run_stream_worker, stream, launch_latency_ns).detach();
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    throw;
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

}  // namespace

CUstream_st* create_stream(CUctx_st* context, StreamKind kind, unsigned flags, int priority) {
  auto* stream = new CUstream_st;
  stream->context = context;
  stream->kind = kind;
  stream->flags = flags;
  stream->priority = priority;
  stream->id = state().new_id();
  try {
    start_worker(stream);
  } catch (...) {
    delete stream;
    throw;
  }
  {
    std::lock_guard lock(context->submit_mutex);
    context->streams.push_back(stream);
    if (kind == StreamKind::kLegacy) context->legacy_stream = stream;
  }
  if (kind == StreamKind::kCreated) state().streams.insert(stream);
  tools::resource(SIMGPU_TOOLS_STREAM_CREATED, context, stream);
  return stream;
}

void detach_stream_locked(CUstream_st* stream) {
  CUctx_st* context = stream->context;
  std::erase(context->streams, stream);
  if (context->legacy_stream == stream) context->legacy_stream = nullptr;
}

void close_stream(CUstream_st* stream) {
  if (stream->kind == StreamKind::kCreated) state().streams.erase(stream);
  // The worker frees the stream once it drained, so notify while holding the
  // lock it must take first, and touch nothing after releasing it.
  std::lock_guard lock(stream->queue_mutex);
  stream->closing = true;
  stream->queue_cv.notify_one();
}

void destroy_stream(CUstream_st* stream) {
  tools::resource(SIMGPU_TOOLS_STREAM_DESTROYING, stream->context, stream);
  forget_stream_capture(stream);
  {
    std::lock_guard lock(stream->context->submit_mutex);
    detach_stream_locked(stream);
  }
  close_stream(stream);
}

CompletionRef submit(CUstream_st* stream, StreamOperation op) {
  op.submit_ns = monotonic_now_ns();
  if (op.tools.correlation_id == 0) op.tools.correlation_id = tools::current_correlation_id();
  CompletionRef completion = op.completion;
  CUctx_st* context = stream->context;
  std::lock_guard lock(context->submit_mutex);
  // A capturing stream records the work as a graph node instead (capture.h).
  if (CompletionRef captured; capture_submission(stream, op, captured)) return captured;
  // Stream synchronization behavior (CUDA docs): the legacy default stream waits
  // for all prior work of the context's blocking streams, and every blocking
  // stream waits for prior legacy work. Non-blocking streams do neither.
  // Per-thread default streams are blocking streams in this sense.
  auto add_wait_if_pending = [&](const CompletionRef& pending) {
    if (pending && !pending->is_done()) op.waits.push_back(pending);
  };
  if (stream->kind == StreamKind::kLegacy) {
    for (CUstream_st* other : context->streams) {
      if (other != stream && other->is_blocking()) add_wait_if_pending(other->last_submitted);
    }
  } else if (stream->is_blocking() && context->legacy_stream) {
    add_wait_if_pending(context->legacy_stream->last_submitted);
  }
  stream->last_submitted = completion;
  {
    std::lock_guard queue_lock(stream->queue_mutex);
    stream->queue.push_back(std::move(op));
  }
  stream->queue_cv.notify_one();
  return completion;
}

CompletionRef last_submitted(CUstream_st* stream) {
  std::lock_guard lock(stream->context->submit_mutex);
  return stream->last_submitted;
}

}  // namespace simgpu
