// When operations ran on the GPU. The hooks bracket each kernel, copy and
// memset with before()/after(); a backend turns that into GpuActivity records
// off the hot path. The events backend (gpu_timing_events.cpp) records driver
// events around each operation and resolves them on the writer thread; a
// CUPTI backend would instead tag operations with external correlation ids
// and translate activity records - the hooks do not change either way.
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

// Opaque per-operation state a backend carries from before() to after().
struct TimingToken {
  void* start = nullptr;
  void* end = nullptr;
  void* context = nullptr;
  uint64_t submitted_ns = 0;
  uint32_t clock_generation = 0;
};

class GpuTimingBackend {
 public:
  virtual ~GpuTimingBackend() = default;
  // Hot path, on the calling thread, right before the real operation is
  // submitted to `stream`.
  virtual TimingToken before(CUstream stream, CUcontext context) noexcept = 0;
  // Right after it was submitted; `submitted` is false when the driver
  // refused it (nothing will run: the backend releases what it took).
  virtual void after(const TimingToken& token, CUstream stream, const GpuOperation& op,
                     bool submitted) noexcept = 0;
  // A context may be destroyed (cuCtxDestroy, primary context release or
  // reset): resolve what is complete while its events still exist. Called on
  // the calling thread, before the real call.
  virtual void before_context_teardown(CUcontext context) noexcept = 0;
  // After it: when `destroyed`, whatever still belongs to the context is
  // given up (and counted).
  virtual void after_context_teardown(CUcontext context, bool destroyed) noexcept = 0;
};

// The backend chosen at start (--gpu-timing). Never null: `none` is a backend
// that does nothing.
GpuTimingBackend& gpu_timing() noexcept;

// At shim start.
void select_gpu_timing(bool events) noexcept;

}  // namespace proflaunch::cuda
