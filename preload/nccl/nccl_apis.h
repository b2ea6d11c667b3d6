// The NCCL APIs the shim records, with the ids their records carry in
// ApiSpan::api (domain kCollective). Append, never renumber.
#pragma once

#include <cstdint>

#include "preload/intercept/hook_registry.h"

#define PROFLAUNCH_NCCL_APIS(X)    \
  X(2000, ncclGetVersion)          \
  X(2001, ncclGetUniqueId)         \
  X(2002, ncclCommInitRank)        \
  X(2003, ncclCommInitRankConfig)  \
  X(2004, ncclCommInitAll)         \
  X(2005, ncclCommSplit)           \
  X(2006, ncclCommFinalize)        \
  X(2007, ncclCommDestroy)         \
  X(2008, ncclCommAbort)           \
  X(2009, ncclCommCount)           \
  X(2010, ncclCommUserRank)        \
  X(2011, ncclCommCuDevice)        \
  X(2012, ncclCommGetAsyncError)   \
  X(2013, ncclGetErrorString)      \
  X(2014, ncclGetLastError)        \
  X(2020, ncclGroupStart)          \
  X(2021, ncclGroupEnd)            \
  X(2030, ncclAllReduce)           \
  X(2031, ncclBroadcast)           \
  X(2032, ncclBcast)               \
  X(2033, ncclReduce)              \
  X(2034, ncclAllGather)           \
  X(2035, ncclReduceScatter)       \
  X(2036, ncclAlltoAll)            \
  X(2037, ncclGather)              \
  X(2038, ncclScatter)             \
  X(2039, ncclSend)                \
  X(2040, ncclRecv)

namespace proflaunch::nccl {

enum class NcclApi : uint16_t {
#define PROFLAUNCH_NCCL_API_ENUM(id, name) name = id,
  PROFLAUNCH_NCCL_APIS(PROFLAUNCH_NCCL_API_ENUM)
#undef PROFLAUNCH_NCCL_API_ENUM
};

// The APIs above, for the hook registry (which names them in traces).
hooks::ApiTable nccl_apis() noexcept;

}  // namespace proflaunch::nccl
