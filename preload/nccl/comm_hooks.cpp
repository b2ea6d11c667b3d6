// Communicators: creation (InitRank, InitRankConfig, InitAll, Split), end
// (Finalize, Destroy, Abort), and the queries and error calls, which are
// recorded as plain ApiCalls.
//
// comm_id, the id every rank shares: ncclCommInitRank's unique id is the
// only thing all ranks have in common, so it is hashed at init. Splits
// derive theirs from the parent's id, the split's number on the parent
// (the same on every rank: splits are collective) and the color.
#include <dlfcn.h>
#include <nccl.h>
#include <unistd.h>

#include <cstring>

#include "preload/capture/carried_state.h"
#include "preload/cuda/current_context.h"
#include "preload/nccl/comm_registry.h"
#include "preload/nccl/nccl_call.h"
#include "preload/nccl/nccl_hooks.h"

namespace proflaunch::nccl {
namespace {

void* real_ncclGetVersion;
void* real_ncclGetUniqueId;
void* real_ncclCommInitRank;
void* real_ncclCommInitRankConfig;
void* real_ncclCommInitAll;
void* real_ncclCommSplit;
void* real_ncclCommFinalize;
void* real_ncclCommDestroy;
void* real_ncclCommAbort;
void* real_ncclCommCount;
void* real_ncclCommUserRank;
void* real_ncclCommCuDevice;
void* real_ncclCommGetAsyncError;
void* real_ncclGetErrorString;
void* real_ncclGetLastError;

#define PROFLAUNCH_NCCL_REAL(symbol) \
  ::proflaunch::hooks::real_function<decltype(::symbol)>(real_##symbol, #symbol, kNcclLibrary)

void record_comm(NcclApi api, uint64_t begin, ncclResult_t result, format::CommAction action, const void* comm,
                 const CommInfo* info, uint64_t comm_id, uint64_t parent_comm_id) {
  if (!runtime::recording()) return;
  if (auto* record = emit<format::CollectiveCommRecord>()) {
    record->device = info != nullptr ? info->device : -1;
    record->span = {begin, now_ticks(), next_correlation_id(), static_cast<int32_t>(result),
                    static_cast<uint16_t>(api), 0};
    record->comm = reinterpret_cast<uint64_t>(comm);
    record->comm_id = info != nullptr ? info->comm_id : comm_id;
    record->parent_comm_id = parent_comm_id;
    record->rank = info != nullptr ? info->rank : -1;
    record->nranks = info != nullptr ? info->nranks : -1;
    record->action = static_cast<uint8_t>(action);
    record->library = static_cast<uint8_t>(info != nullptr ? info->library : format::CollectiveLibrary::kUnknown);
    commit();
  }
}

// A capture window opens: each live communicator, as it was made.
void carry_live_comms(void (*carry)(const void* record, uint16_t bytes)) {
  for_each_comm([&](const CommInfo& info) {
    format::CollectiveCommRecord record{};
    record.header = format::header_for<format::CollectiveCommRecord>();
    record.device = info.device;
    record.span.api = static_cast<uint16_t>(NcclApi::ncclCommInitRank);
    record.comm = reinterpret_cast<uint64_t>(info.comm.load(std::memory_order_acquire));
    record.comm_id = info.comm_id;
    record.rank = info.rank;
    record.nranks = info.nranks;
    record.action = static_cast<uint8_t>(format::CommAction::kInit);
    record.library = static_cast<uint8_t>(info.library);
    carry(&record, sizeof record);
  });
}

// NCCL or RCCL: the file the real function lives in (RCCL's librccl.so
// exports NCCL's API names).
format::CollectiveLibrary library_of(const void* real_function) {
  Dl_info info{};
  if (real_function == nullptr || dladdr(real_function, &info) == 0 || info.dli_fname == nullptr)
    return format::CollectiveLibrary::kUnknown;
  const char* slash = std::strrchr(info.dli_fname, '/');
  const char* name = slash != nullptr ? slash + 1 : info.dli_fname;
  return std::strncmp(name, "librccl", 7) == 0 ? format::CollectiveLibrary::kRccl : format::CollectiveLibrary::kNccl;
}

// Rank, size and device as the library reports them (through the real
// functions: these calls are not recorded). RCCL's device is a HIP ordinal.
CommInfo* remember(ncclComm_t comm, uint64_t comm_id, CUcontext context) {
  int rank = -1, nranks = -1, device = -1;
  auto* count = PROFLAUNCH_NCCL_REAL(ncclCommCount);
  if (count != nullptr) count(comm, &nranks);
  if (auto* user_rank = PROFLAUNCH_NCCL_REAL(ncclCommUserRank)) user_rank(comm, &rank);
  if (auto* cu_device = PROFLAUNCH_NCCL_REAL(ncclCommCuDevice)) cu_device(comm, &device);
  const format::CollectiveLibrary library = library_of(reinterpret_cast<const void*>(count));
  if (library == format::CollectiveLibrary::kRccl && device >= 0) device += format::kAmdDeviceBase;
  capture::add_carry_listener(&carry_live_comms);
  return register_comm(comm, comm_id, rank, nranks, device, context, library);
}

template <typename CallReal>
ncclResult_t traced_init(NcclApi api, ncclComm_t* comm, const ncclUniqueId& id, CallReal&& call_real) {
  if (!nccl_active()) return call_real();
  NcclCallScope scope;
  const uint64_t begin = now_ticks();
  const ncclResult_t result = call_real();
  const uint64_t comm_id = fnv1a(id.internal, sizeof id.internal);
  CommInfo* info = nullptr;
  if (result == ncclSuccess && comm != nullptr && *comm != nullptr) {
    CUcontext context = nullptr;
    cuda::current_device(&context);
    info = remember(*comm, comm_id, context);
  }
  record_comm(api, begin, result, format::CommAction::kInit, comm != nullptr ? *comm : nullptr, info, comm_id, 0);
  return result;
}

template <typename CallReal>
ncclResult_t traced_end(NcclApi api, format::CommAction action, ncclComm_t comm, CallReal&& call_real) {
  if (!nccl_active()) return call_real();
  NcclCallScope scope;
  const uint64_t begin = now_ticks();
  // Copied before the real call frees the communicator.
  CommInfo* found = find_comm(comm);
  CommInfo copy_of_info;
  if (found != nullptr) {
    copy_of_info.comm_id = found->comm_id;
    copy_of_info.rank = found->rank;
    copy_of_info.nranks = found->nranks;
    copy_of_info.device = found->device;
    copy_of_info.library = found->library;
  }
  const ncclResult_t result = call_real();
  if (action != format::CommAction::kFinalize && result == ncclSuccess) forget_comm(comm);
  record_comm(api, begin, result, action, comm, found != nullptr ? &copy_of_info : nullptr, 0, 0);
  return result;
}

}  // namespace
}  // namespace proflaunch::nccl

namespace pn = proflaunch::nccl;
using pn::NcclApi;
using proflaunch::format::CommAction;

#define PROFLAUNCH_NCCL_REAL_OR(symbol, failure)                                                              \
  auto* real = ::proflaunch::hooks::real_function<decltype(::symbol)>(pn::real_##symbol, #symbol, pn::kNcclLibrary); \
  if (real == nullptr) return failure

extern "C" {

PROFLAUNCH_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  PROFLAUNCH_NCCL_REAL_OR(ncclCommInitRank, ncclSystemError);
  return pn::traced_init(NcclApi::ncclCommInitRank, comm, id, [&] { return real(comm, nranks, id, rank); });
}

PROFLAUNCH_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                                      ncclConfig_t* config) {
  PROFLAUNCH_NCCL_REAL_OR(ncclCommInitRankConfig, ncclSystemError);
  return pn::traced_init(NcclApi::ncclCommInitRankConfig, comm, id,
                         [&] { return real(comm, nranks, id, rank, config); });
}

PROFLAUNCH_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devices) {
  PROFLAUNCH_NCCL_REAL_OR(ncclCommInitAll, ncclSystemError);
  if (!pn::nccl_active()) return real(comms, ndev, devices);
  pn::NcclCallScope scope;
  const uint64_t begin = proflaunch::now_ticks();
  const ncclResult_t result = real(comms, ndev, devices);
  // One process holds every rank: the pid and the first handle make an id
  // no other communicator of this host shares.
  const struct {
    int32_t pid;
    int32_t ndev;
    const void* first;
  } identity{getpid(), ndev, (result == ncclSuccess && comms != nullptr) ? comms[0] : nullptr};
  const uint64_t comm_id = pn::fnv1a(&identity, sizeof identity);
  for (int i = 0; result == ncclSuccess && comms != nullptr && i < ndev; ++i) {
    pn::CommInfo* info = pn::remember(comms[i], comm_id, nullptr);
    pn::record_comm(NcclApi::ncclCommInitAll, begin, result, CommAction::kInitAll, comms[i], info, comm_id, 0);
  }
  if (result != ncclSuccess)
    pn::record_comm(NcclApi::ncclCommInitAll, begin, result, CommAction::kInitAll, nullptr, nullptr, 0, 0);
  return result;
}

PROFLAUNCH_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                             ncclConfig_t* config) {
  PROFLAUNCH_NCCL_REAL_OR(ncclCommSplit, ncclSystemError);
  if (!pn::nccl_active()) return real(comm, color, key, newcomm, config);
  pn::NcclCallScope scope;
  const uint64_t begin = proflaunch::now_ticks();
  pn::CommInfo* parent = pn::find_comm(comm);
  const uint64_t split_number = parent != nullptr ? parent->splits.fetch_add(1) + 1 : 0;
  const ncclResult_t result = real(comm, color, key, newcomm, config);
  const uint64_t parent_id = parent != nullptr ? parent->comm_id : 0;
  const struct {
    uint64_t parent;
    uint64_t split;
    int64_t color;
  } identity{parent_id, split_number, color};
  const uint64_t comm_id = pn::fnv1a(&identity, sizeof identity);
  pn::CommInfo* info = nullptr;
  if (result == ncclSuccess && newcomm != nullptr && *newcomm != nullptr)
    info = pn::remember(*newcomm, comm_id, parent != nullptr ? parent->context : nullptr);
  pn::record_comm(NcclApi::ncclCommSplit, begin, result, CommAction::kSplit, newcomm != nullptr ? *newcomm : nullptr,
                  info, comm_id, parent_id);
  return result;
}

PROFLAUNCH_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  PROFLAUNCH_NCCL_REAL_OR(ncclCommFinalize, ncclSystemError);
  return pn::traced_end(NcclApi::ncclCommFinalize, CommAction::kFinalize, comm, [&] { return real(comm); });
}

PROFLAUNCH_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  PROFLAUNCH_NCCL_REAL_OR(ncclCommDestroy, ncclSystemError);
  return pn::traced_end(NcclApi::ncclCommDestroy, CommAction::kDestroy, comm, [&] { return real(comm); });
}

PROFLAUNCH_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  PROFLAUNCH_NCCL_REAL_OR(ncclCommAbort, ncclSystemError);
  return pn::traced_end(NcclApi::ncclCommAbort, CommAction::kAbort, comm, [&] { return real(comm); });
}

PROFLAUNCH_EXPORT ncclResult_t ncclGetVersion(int* version) {
  PROFLAUNCH_NCCL_REAL_OR(ncclGetVersion, ncclSystemError);
  return pn::traced_nccl_query(NcclApi::ncclGetVersion, [&] { return real(version); });
}

PROFLAUNCH_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  PROFLAUNCH_NCCL_REAL_OR(ncclGetUniqueId, ncclSystemError);
  return pn::traced_nccl_query(NcclApi::ncclGetUniqueId, [&] { return real(id); });
}

PROFLAUNCH_EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  PROFLAUNCH_NCCL_REAL_OR(ncclCommCount, ncclSystemError);
  return pn::traced_nccl_query(NcclApi::ncclCommCount, [&] { return real(comm, count); });
}

PROFLAUNCH_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  PROFLAUNCH_NCCL_REAL_OR(ncclCommUserRank, ncclSystemError);
  return pn::traced_nccl_query(NcclApi::ncclCommUserRank, [&] { return real(comm, rank); });
}

PROFLAUNCH_EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  PROFLAUNCH_NCCL_REAL_OR(ncclCommCuDevice, ncclSystemError);
  return pn::traced_nccl_query(NcclApi::ncclCommCuDevice, [&] { return real(comm, device); });
}

PROFLAUNCH_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* error) {
  PROFLAUNCH_NCCL_REAL_OR(ncclCommGetAsyncError, ncclSystemError);
  return pn::traced_nccl_query(NcclApi::ncclCommGetAsyncError, [&] { return real(comm, error); });
}

PROFLAUNCH_EXPORT const char* ncclGetErrorString(ncclResult_t code) {
  PROFLAUNCH_NCCL_REAL_OR(ncclGetErrorString, "unknown result code");
  return pn::traced_nccl_query(NcclApi::ncclGetErrorString, [&] { return real(code); });
}

PROFLAUNCH_EXPORT const char* ncclGetLastError(ncclComm_t comm) {
  PROFLAUNCH_NCCL_REAL_OR(ncclGetLastError, "");
  return pn::traced_nccl_query(NcclApi::ncclGetLastError, [&] { return real(comm); });
}

}  // extern "C"

namespace proflaunch::nccl {

#define PROFLAUNCH_NCCL_HOOK(symbol) PROFLAUNCH_HOOK(symbol, nullptr, 0, false, kNcclLibrary, real_##symbol)

hooks::HookFamily nccl_comm_hooks() {
  static const intercept::HookEntry kHooks[] = {
      PROFLAUNCH_NCCL_HOOK(ncclGetVersion),         PROFLAUNCH_NCCL_HOOK(ncclGetUniqueId),
      PROFLAUNCH_NCCL_HOOK(ncclCommInitRank),       PROFLAUNCH_NCCL_HOOK(ncclCommInitRankConfig),
      PROFLAUNCH_NCCL_HOOK(ncclCommInitAll),        PROFLAUNCH_NCCL_HOOK(ncclCommSplit),
      PROFLAUNCH_NCCL_HOOK(ncclCommFinalize),       PROFLAUNCH_NCCL_HOOK(ncclCommDestroy),
      PROFLAUNCH_NCCL_HOOK(ncclCommAbort),          PROFLAUNCH_NCCL_HOOK(ncclCommCount),
      PROFLAUNCH_NCCL_HOOK(ncclCommUserRank),       PROFLAUNCH_NCCL_HOOK(ncclCommCuDevice),
      PROFLAUNCH_NCCL_HOOK(ncclCommGetAsyncError),  PROFLAUNCH_NCCL_HOOK(ncclGetErrorString),
      PROFLAUNCH_NCCL_HOOK(ncclGetLastError),
  };
  return {kHooks, std::size(kHooks)};
}

}  // namespace proflaunch::nccl
