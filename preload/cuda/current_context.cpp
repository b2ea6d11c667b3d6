#include "preload/cuda/current_context.h"

#include <atomic>

#include "preload/cuda/devices.h"
#include "preload/cuda/driver_services.h"

namespace proflaunch::cuda {
namespace {

struct ContextCache {
  CUcontext context;
  int device;
  uint32_t uses_left;   // 0: ask the driver
  uint32_t generation;  // of g_context_generation when filled
};
__thread __attribute__((tls_model("initial-exec"))) ContextCache tls_context_cache{nullptr, -1, 0, 0};
std::atomic<uint32_t> g_context_generation{0};

int refresh_current_device(ContextCache& cache, CUcontext* context) noexcept {
  const DriverServices& driver = driver_services();
  CUcontext current = nullptr;
  const uint32_t generation = g_context_generation.load(std::memory_order_acquire);
  if (driver.ctx_get_current == nullptr || driver.ctx_get_current(&current) != CUDA_SUCCESS) current = nullptr;
  if (current != cache.context || cache.device < 0) {
    CUdevice device = -1;
    if (current == nullptr || driver.ctx_get_device == nullptr || driver.ctx_get_device(&device) != CUDA_SUCCESS)
      device = -1;
    cache.context = current;
    cache.device = device;
    if (device >= 0) ensure_device_defined(device);
  }
  // No context yet: ask again next time (the runtime creates it lazily).
  cache.uses_left = current != nullptr ? kContextRevalidatePeriod : 0;
  cache.generation = generation;
  *context = cache.context;
  return cache.device;
}

}  // namespace

int current_device(CUcontext* context) noexcept {
  ContextCache& cache = tls_context_cache;
  if (__builtin_expect(cache.uses_left != 0 &&
                           cache.generation == g_context_generation.load(std::memory_order_relaxed), 1)) {
    --cache.uses_left;
    *context = cache.context;
    return cache.device;
  }
  return refresh_current_device(cache, context);
}

void forget_current_context() noexcept { tls_context_cache.uses_left = 0; }

void forget_all_current_contexts() noexcept {
  g_context_generation.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace proflaunch::cuda
