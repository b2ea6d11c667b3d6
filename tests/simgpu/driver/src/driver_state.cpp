// cuInit, the process-wide state, and what happens across fork.
#include "driver_state.h"

#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "api_guard.h"
#include "context.h"
#include "device_telemetry.h"
#include "kernel_cost.h"
#include "mempool.h"

namespace simgpu {
namespace {

enum InitPhase : int {
  kNotInitialized,
  kInitialized,
  kInitFailed,
  // A fork child of an initialized process: the parent's worker threads and
  // locks did not come along, so the child must not touch that state. The
  // child may still use the GPU if the parent never initialized the driver.
  kForkedAfterInit,
};

std::atomic<int> g_phase{kNotInitialized};
std::mutex g_init_mutex;  // trivially destructible: safe at exit
CUresult g_init_result = CUDA_SUCCESS;
DriverState* g_state = nullptr;  // created once, never freed (see driver_state.h)

// The driver shuts down when the process exits, from an atexit handler that
// cuInit registers: handlers registered after cuInit run before it, and
// everything later (other handlers, every library's destructor) finds it
// gone: calls that need the driver return CUDA_ERROR_DEINITIALIZED, events
// cannot be queried. So on an H200 (driver 580): the teardown calls a
// framework made from its library destructors returned error 4, and events a
// profiler queried from its own destructor were gone.
std::atomic<bool> g_shut_down{false};
void shut_down_at_exit() { g_shut_down.store(true, std::memory_order_release); }

void mark_fork_child() {
  if (g_phase.load() == kInitialized) g_phase.store(kForkedAfterInit);
}

CUresult initialize_locked() {
  auto* fresh = new DriverState;
  std::string error;
  if (!load_config_from_environment(fresh->config, error) || !load_kernel_costs(fresh->config.kernel_costs, error)) {
    std::fprintf(stderr, "simgpu: cuInit failed: %s\n", error.c_str());
    delete fresh;
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (fresh->config.device_count == 0) {
    delete fresh;
    return CUDA_ERROR_NO_DEVICE;
  }
  // CUDA_VISIBLE_DEVICES, as the real driver reads it (or the front end's
  // own variables, device_telemetry.h): the program sees the listed
  // devices, renumbered from 0.
  std::vector<int> physical(size_t(fresh->config.device_count));
  int visible = 0;
  if (engine_personality().visible_devices != nullptr)
    engine_personality().visible_devices(fresh->config.device_count, physical.data(), &visible);
  else
    visible_devices(fresh->config.device_count, physical.data(), &visible, std::getenv("CUDA_VISIBLE_DEVICES"));
  if (visible == 0) {
    delete fresh;
    return CUDA_ERROR_NO_DEVICE;
  }
  g_state = fresh;
  for (int ordinal = 0; ordinal < visible; ++ordinal) {
    auto device = std::make_unique<Device>();
    device->ordinal = ordinal;
    device->physical = physical[size_t(ordinal)];
    device->total_bytes = fresh->config.device_memory_bytes;
    auto* primary = new CUctx_st;
    primary->id = fresh->new_id();
    primary->device = device.get();
    primary->is_primary = true;
    fresh->contexts.insert(primary);
    device->primary_context = primary;
    fresh->devices.push_back(std::move(device));
  }
  for (auto& device : fresh->devices) create_default_pool(*device);
  for (auto& device : fresh->devices) telemetry_open(*device);
  pthread_atfork(nullptr, nullptr, mark_fork_child);
  std::atexit(shut_down_at_exit);
  return CUDA_SUCCESS;
}

}  // namespace

// A kernel faulted (SIMGPU_FAULT_KERNELS): as on a real device, the error is
// sticky and every later call that needs the driver reports it.
std::atomic<bool> g_faulted{false};


CUresult driver_ready() noexcept {
  int phase = g_phase.load(std::memory_order_acquire);
  if (phase != kInitialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (g_shut_down.load(std::memory_order_acquire)) return CUDA_ERROR_DEINITIALIZED;
  return g_faulted.load(std::memory_order_relaxed) ? CUDA_ERROR_ILLEGAL_ADDRESS : CUDA_SUCCESS;
}

void mark_device_fault() noexcept { g_faulted.store(true, std::memory_order_relaxed); }

DriverState& state() { return *g_state; }

Device* find_device(CUdevice ordinal) {
  auto& devices = state().devices;
  if (ordinal < 0 || size_t(ordinal) >= devices.size()) return nullptr;
  return devices[size_t(ordinal)].get();
}

bool Device::reserve_bytes(uint64_t bytes) {
  uint64_t used = used_bytes.load();
  do {
    if (bytes > total_bytes || used > total_bytes - bytes) return false;
  } while (!used_bytes.compare_exchange_weak(used, used + bytes));
  telemetry_memory(*this);
  return true;
}

void Device::release_bytes(uint64_t bytes) {
  used_bytes.fetch_sub(bytes);
  telemetry_memory(*this);
}

bool DriverState::reserve_pinned_bytes(uint64_t bytes) {
  const uint64_t limit = config.pinned_memory_bytes;
  uint64_t used = pinned_bytes.load();
  do {
    if (bytes > limit || used > limit - bytes) return false;
  } while (!pinned_bytes.compare_exchange_weak(used, used + bytes));
  return true;
}

void synchronize_device(Device* device) {
  std::vector<CUctx_st*> contexts;
  state().contexts.for_each([&](CUctx_st* context) {
    if ((!device || context->device == device) && context->active.load()) contexts.push_back(context);
  });
  for (CUctx_st* context : contexts) synchronize_context(context);
}

}  // namespace simgpu

using namespace simgpu;

extern "C" {

CUresult CUDAAPI cuInit(unsigned int Flags) {
  return api_call_without_init([&]() -> CUresult {
    if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(g_init_mutex);
    switch (g_phase.load()) {
      case kInitialized:
        return CUDA_SUCCESS;
      case kInitFailed:
        return g_init_result;
      case kForkedAfterInit:
        return CUDA_ERROR_NOT_INITIALIZED;
      default:
        break;
    }
    g_init_result = initialize_locked();
    g_phase.store(g_init_result == CUDA_SUCCESS ? kInitialized : kInitFailed, std::memory_order_release);
    return g_init_result;
  });
}

CUresult CUDAAPI cuDriverGetVersion(int* driverVersion) {
  if (!driverVersion) return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = CUDA_VERSION;
  return CUDA_SUCCESS;
}

}  // extern "C"
