#include "preload/nccl/nccl_apis.h"

#include <iterator>

namespace proflaunch::nccl {
namespace {

const hooks::ApiTableEntry kNcclApis[] = {
#define PROFLAUNCH_NCCL_API_ROW(id, name) {id, #name, false},
    PROFLAUNCH_NCCL_APIS(PROFLAUNCH_NCCL_API_ROW)
#undef PROFLAUNCH_NCCL_API_ROW
};

}  // namespace

hooks::ApiTable nccl_apis() noexcept {
  return {kNcclApis, std::size(kNcclApis), format::ApiDomain::kCollective, format::Vendor::kNvidia};
}

}  // namespace proflaunch::nccl
