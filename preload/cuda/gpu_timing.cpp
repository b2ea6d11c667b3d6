#include "preload/cuda/gpu_timing.h"

namespace proflaunch::cuda {
namespace {

// --gpu-timing=none: operations are recorded, their GPU time is not.
class NoGpuTiming final : public GpuTimingBackend {
 public:
  TimingToken before(CUstream, CUcontext, Submission, bool) noexcept override { return {}; }
  void returned(TimingToken&, CUstream, bool) noexcept override {}
  void queue(const TimingToken&, const GpuOperation&) noexcept override {}
  void release(const TimingToken&) noexcept override {}
  void* lock_submissions(CUcontext, CUstream) noexcept override { return nullptr; }
  void unlock_submissions(void*) noexcept override {}
  void before_context_teardown(CUcontext) noexcept override {}
  void after_context_teardown(CUcontext, bool) noexcept override {}
};

constinit NoGpuTiming g_none;
GpuTimingBackend* g_backend = &g_none;
bool g_enabled = false;
GpuTimingBackend* g_host_work = nullptr;  // null: g_backend

}  // namespace

GpuTimingBackend& gpu_timing() noexcept { return *g_backend; }

bool gpu_timing_enabled() noexcept { return g_enabled; }

GpuTimingBackend& gpu_timing_for_host_work() noexcept {
  if (GpuTimingBackend* host_work = __atomic_load_n(&g_host_work, __ATOMIC_ACQUIRE)) return *host_work;
  return *__atomic_load_n(&g_backend, __ATOMIC_ACQUIRE);
}

bool gpu_timing_backend_is(const GpuTimingBackend* backend) noexcept { return g_backend == backend; }

void use_gpu_timing_backend(GpuTimingBackend* backend) noexcept { use_gpu_timing_backends(backend, nullptr); }

void use_gpu_timing_backends(GpuTimingBackend* backend, GpuTimingBackend* host_work) noexcept {
  __atomic_store_n(&g_host_work, host_work, __ATOMIC_RELEASE);
  __atomic_store_n(&g_backend, backend != nullptr ? backend : &g_none, __ATOMIC_RELEASE);
  __atomic_store_n(&g_enabled, backend != nullptr, __ATOMIC_RELEASE);
}

}  // namespace proflaunch::cuda
