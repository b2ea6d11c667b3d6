// What every NCCL hook shares: whether to record, the per-thread group
// state, and an ApiCall for the calls that are not collectives.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "formats/records.h"
#include "preload/nccl/nccl_apis.h"
#include "preload/record/emit.h"

namespace proflaunch::nccl {

// One NCCL call being recorded on this thread. NCCL calls itself through its
// exported names (ncclBcast may call ncclBroadcast): only the outermost call
// records.
extern __thread __attribute__((tls_model("initial-exec"))) uint32_t tls_nccl_depth;

inline bool nccl_recording() noexcept {
  return runtime::recording() && (trace_domains() & kTraceNccl) != 0 && !inside_profiler() && tls_nccl_depth == 0;
}
// Communicators are followed between capture windows too (runtime::active):
// a window's collectives need the communicator made before it.
inline bool nccl_active() noexcept {
  return runtime::active() && (trace_domains() & kTraceNccl) != 0 && !inside_profiler() && tls_nccl_depth == 0;
}

class NcclCallScope {
 public:
  NcclCallScope() noexcept { ++tls_nccl_depth; }
  ~NcclCallScope() { --tls_nccl_depth; }
  NcclCallScope(const NcclCallScope&) = delete;
  NcclCallScope& operator=(const NcclCallScope&) = delete;
};

// The group a thread is building (ncclGroupStart ... ncclGroupEnd).
struct GroupStream {
  CUstream runs_on;     // as the launch hook sees it
  uint64_t stream;      // as records carry it
  CUcontext context;    // of the member's communicator, when known
  int32_t device;
  uint32_t members;
};

inline constexpr uint32_t kMaxGroupStreams = 8;

struct GroupState {
  uint32_t depth;  // TLS: zero-initialized
  uint64_t group_id;
  uint32_t stream_count;
  GroupStream streams[kMaxGroupStreams];
  void note_member(CUstream runs_on, uint64_t stream, CUcontext context, int32_t device) noexcept;
};

extern __thread __attribute__((tls_model("initial-exec"))) GroupState tls_group;

// An ApiCall record for a call that is neither a collective nor a
// communicator change.
inline void record_api_call(NcclApi api, uint64_t begin_ticks, int32_t result) noexcept {
  if (auto* record = emit_api_call()) {
    record->span = {begin_ticks, now_ticks(), next_correlation_id(), result, static_cast<uint16_t>(api), 0};
    commit();
  }
}

// Runs `call_real` and records it as an ApiCall when recording.
template <typename CallReal>
auto traced_nccl_query(NcclApi api, CallReal&& call_real) {
  if (!nccl_recording()) return call_real();
  NcclCallScope scope;
  const uint64_t begin = now_ticks();
  const auto result = call_real();
  if constexpr (std::is_integral_v<decltype(result)> || std::is_enum_v<decltype(result)>)
    record_api_call(api, begin, static_cast<int32_t>(result));
  else
    record_api_call(api, begin, 0);
  return result;
}

}  // namespace proflaunch::nccl
