#include "preload/cuda/rows/row_support.h"

namespace proflaunch::cuda {

void record_failed_call(uint16_t api, uint16_t flags, int32_t result) noexcept {
  if (auto* record = emit_api_call()) {
    const uint64_t now = now_ticks();
    record->span = {now, now, next_correlation_id(), result, api,
                    static_cast<uint16_t>(flags | format::kApiNoDuration)};
    commit();
  }
}

}  // namespace proflaunch::cuda
