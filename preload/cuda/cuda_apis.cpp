#include "preload/cuda/cuda_apis.h"

#include "preload/definitions.h"

namespace proflaunch::cuda {

void define_cuda_apis() noexcept {
#define PROFLAUNCH_DEFINE_DRIVER_API(id, name) \
  define_api(id, #name, format::ApiDomain::kDriver, format::Vendor::kNvidia);
#define PROFLAUNCH_DEFINE_RUNTIME_API(id, name) \
  define_api(id, #name, format::ApiDomain::kRuntime, format::Vendor::kNvidia);
  PROFLAUNCH_CUDA_DRIVER_APIS(PROFLAUNCH_DEFINE_DRIVER_API)
  PROFLAUNCH_CUDA_RUNTIME_APIS(PROFLAUNCH_DEFINE_RUNTIME_API)
#undef PROFLAUNCH_DEFINE_DRIVER_API
#undef PROFLAUNCH_DEFINE_RUNTIME_API
}

}  // namespace proflaunch::cuda
