#include "preload/nccl/nccl_apis.h"

#include "preload/definitions.h"

namespace proflaunch::nccl {

void define_nccl_apis() noexcept {
#define PROFLAUNCH_DEFINE_NCCL_API(id, name) \
  define_api(id, #name, format::ApiDomain::kCollective, format::Vendor::kNvidia);
  PROFLAUNCH_NCCL_APIS(PROFLAUNCH_DEFINE_NCCL_API)
#undef PROFLAUNCH_DEFINE_NCCL_API
}

}  // namespace proflaunch::nccl
