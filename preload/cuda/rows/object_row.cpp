#include "preload/cuda/rows/object_row.h"

#include "preload/cuda/driver_services.h"
#include "preload/cuda/hook.h"

namespace proflaunch::cuda {
namespace {

// The primary context of each device, so that a release or reset can let
// the timing backend finish with that context first.
constexpr int kMaxDevices = 64;
CUcontext g_primary_context[kMaxDevices];

}  // namespace

CUcontext primary_context_of(int device) noexcept {
  if (device < 0 || device >= kMaxDevices) return nullptr;
  return __atomic_load_n(&g_primary_context[device], __ATOMIC_ACQUIRE);
}

void remember_primary_context(int device, CUcontext context) noexcept {
  if (device >= 0 && device < kMaxDevices) __atomic_store_n(&g_primary_context[device], context, __ATOMIC_RELEASE);
}

bool primary_context_active(int device) noexcept {
  using GetState = CUresult(CUdevice, unsigned int*, int*);
  static void* slot = nullptr;
  static const intercept::HookEntry entry{"cuDevicePrimaryCtxGetState", nullptr, 0, false, kDriverLibrary, nullptr,
                                          &slot};
  auto* get_state = reinterpret_cast<GetState*>(intercept::real_function(entry));
  unsigned int flags = 0;
  int active = 1;
  // Not known: assume alive, so nothing is given up too early.
  if (get_state == nullptr || get_state(device, &flags, &active) != CUDA_SUCCESS) return true;
  return active != 0;
}

uint64_t stream_unique_id(CUstream stream) noexcept {
  unsigned long long id = 0;
  const DriverServices& driver = driver_services();
  if (driver.stream_get_id == nullptr || driver.stream_get_id(stream, &id) != CUDA_SUCCESS) return 0;
  return id;
}

}  // namespace proflaunch::cuda
