// When operations ran on the GPU. The hooks bracket each kernel, copy,
// memset and host function with before() / returned() / queue(); a backend
// turns that into GpuActivity records off the hot path. The events backend
// (gpu_timing_events.cpp) records driver events around each operation and
// resolves them on the writer thread; the CUPTI backend (cupti/) notes each
// operation's CUPTI correlation id and joins CUPTI's activity records to it -
// the hooks do not change either way.
//
// The order the hooks follow, and why:
//   before()     right before the real call: the start event;
//   real call
//   returned()   right after it, before the hook writes its record or takes
//                a stack: the end event. Anything in between would be
//                counted as GPU time on an idle stream (the GPU finishes
//                first and then waits for the end event).
//   queue()      after the record was committed: the writer resolves the
//                operation after it has written the record.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "formats/records.h"

namespace proflaunch::cuda {

struct GpuOperation {
  uint64_t correlation_id;
  uint64_t stream;  // as recorded (normalized)
  int32_t device;
  format::GpuActivityKind kind;
};

// How an operation is submitted, which decides whether the backend may hold
// the stream's submission lock around it (gpu_timing_events.cpp says why).
enum class Submission : uint8_t {
  kAsynchronous,   // returns once queued: the lock is held from before() to returned()
  kSynchronous,    // may block until the GPU is done: never hold a lock across it
  kLibraryFrame,   // a start event taken for a library call's later launch (library_frame.h)
};

class GpuTimingBackend;

// Opaque per-operation state a backend carries from before() to queue().
// `owner` is the backend that made it: the hooks hand the token back to it
// even if the backend in use changed in between (CUPTI given up to the program).
struct TimingToken {
  GpuTimingBackend* owner = nullptr;
  void* start = nullptr;
  void* end = nullptr;
  void* context = nullptr;
  void* submission_lock = nullptr;
  uint64_t start_recorded_ns = 0;  // host time before the start event was recorded
  uint64_t submitted_ns = 0;       // host time right before the real call
  uint64_t returned_ns = 0;   // host time right after it
  uint32_t clock_generation = 0;
  bool done_by_return = false;  // the work was complete when the call returned
  Submission submission = Submission::kAsynchronous;
  uint32_t cupti_ids[2] = {0, 0};  // CUPTI: the correlation ids of the driver and runtime call
};

class GpuTimingBackend {
 public:
  // Hot path, on the calling thread, right before the real operation is
  // submitted to `stream` (the context current on this thread).
  // `done_by_return`: the API documents that the call returns only once the
  // work is complete (a synchronous copy to host memory, ...), so its end
  // is bounded by the call's return.
  virtual TimingToken before(CUstream stream, CUcontext context, Submission submission,
                             bool done_by_return) noexcept = 0;
  // Right after the real call returned; `submitted` is false when the driver
  // refused the work (nothing will run: the backend releases what it took).
  virtual void returned(TimingToken& token, CUstream stream, bool submitted) noexcept = 0;
  // After the operation's record was committed. A token without a start
  // event (before() could not take or record one) stands for work that
  // runs but cannot be timed: the backend counts it as lost.
  virtual void queue(const TimingToken& token, const GpuOperation& op) noexcept = 0;
  // A start event that no operation used (a library call that launched
  // nothing on that stream).
  virtual void release(const TimingToken& token) noexcept = 0;
  // Calls that put untimed work on a stream (cuStreamWaitEvent) hold the
  // stream's submission lock around the real call, so that they cannot land
  // inside another thread's timed operation. Returns what unlock takes (null:
  // nothing to unlock).
  virtual void* lock_submissions(CUcontext context, CUstream stream) noexcept = 0;
  virtual void unlock_submissions(void* lock) noexcept = 0;
  // A context may be destroyed (cuCtxDestroy, primary context release or
  // reset): resolve what is complete while its events still exist. Called on
  // the calling thread, before the real call.
  virtual void before_context_teardown(CUcontext context) noexcept = 0;
  // After it: when `destroyed`, whatever still belongs to the context is
  // given up (and counted).
  virtual void after_context_teardown(CUcontext context, bool destroyed) noexcept = 0;
  // A node of an instantiated graph was recorded (GraphNodeRecord.node is
  // `node`): a backend that sees inside graph launches learns its id.
  virtual void graph_node_recorded(CUgraphNode) noexcept {}
  // Before a graph is instantiated (the driver clones its nodes then): a
  // backend that learns the clones must be started by then.
  virtual void before_graph_instantiate() noexcept {}
  // Around the real call of a launch that another backend times (a library
  // frame's kernel, timed by events from the library call's start): a
  // backend that sees all GPU work by itself (CUPTI) learns that this
  // call's work is accounted for and must not report it as unattributed.
  virtual void foreign_submission_begin() noexcept {}
  virtual void foreign_submission_end(bool /*submitted*/) noexcept {}
 protected:
  // Backends are globals, never deleted through this interface: a trivial,
  // non-virtual destructor keeps them free of exit-time destruction
  // (preload/lazy_global.h).
  ~GpuTimingBackend() = default;
};

// The backend a token goes back to.
inline GpuTimingBackend& owner_of(const TimingToken& token);

// The backend in use, chosen at start (gpu_timing_select.h) and changed when
// CUPTI gives way to events. Never null: `none` is a backend that does
// nothing. This file knows the backends only through GpuTimingBackend.
GpuTimingBackend& gpu_timing() noexcept;

// Whether GPU timing is on at all (hooks skip the timing calls when not).
bool gpu_timing_enabled() noexcept;

// The backend for work whose GPU time the backend in use does not record
// (CUPTI has no activity record for host functions, and a library frame's
// collective is timed from the moment its rank reached it, library_frame.h):
// the events backend while CUPTI is in use; otherwise gpu_timing().
GpuTimingBackend& gpu_timing_for_host_work() noexcept;

// Whether `backend` is the one in use.
bool gpu_timing_backend_is(const GpuTimingBackend* backend) noexcept;

// Makes `backend` the one in use (null: none), for all work: the events
// backend taking over from CUPTI, tests that watch what the hooks ask of a
// backend.
void use_gpu_timing_backend(GpuTimingBackend* backend) noexcept;

// Makes `backend` the one in use and `host_work` the one for host work
// (null: the same).
void use_gpu_timing_backends(GpuTimingBackend* backend, GpuTimingBackend* host_work) noexcept;

inline GpuTimingBackend& owner_of(const TimingToken& token) {
  return token.owner != nullptr ? *token.owner : gpu_timing();
}

}  // namespace proflaunch::cuda
