// What the shim knows about each live communicator of this process: the id
// every rank shares, rank and size, device and context, and the counters
// that number its collectives the same way on every rank. Written at
// communicator creation (cold, under a lock); read lock-free by the
// collective hooks.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "formats/records.h"

namespace proflaunch::nccl {

inline constexpr int kMaxTrackedPeers = 256;

struct CommInfo {
  std::atomic<const void*> comm;  // the ncclComm_t; null when the slot is free
  std::atomic<bool> alive;
  uint64_t comm_id;
  int32_t rank;
  int32_t nranks;
  int32_t device;     // AMD devices (RCCL) as format::kAmdDeviceBase + HIP ordinal
  CUcontext context;  // where its streams live, when known (null for InitAll)
  format::CollectiveLibrary library;
  std::atomic<uint64_t> collectives;
  std::atomic<uint64_t> splits;
  // Per peer (rank < kMaxTrackedPeers): sends to it, receives from it.
  std::atomic<uint32_t> sends[kMaxTrackedPeers];
  std::atomic<uint32_t> receives[kMaxTrackedPeers];
};

// The live entry for `comm`, or null (unknown communicator).
CommInfo* find_comm(const void* comm) noexcept;

// Adds (or renews) the entry for `comm`. Null when the registry is full.
CommInfo* register_comm(const void* comm, uint64_t comm_id, int32_t rank, int32_t nranks, int32_t device,
                        CUcontext context, format::CollectiveLibrary library = format::CollectiveLibrary::kNccl) noexcept;

void forget_comm(const void* comm) noexcept;

// Calls `visit` for every live communicator.
template <typename Visit>
void for_each_comm(Visit&& visit) noexcept;
CommInfo* comm_slot(size_t index) noexcept;  // null past the last slot
template <typename Visit>
void for_each_comm(Visit&& visit) noexcept {
  for (size_t i = 0; CommInfo* slot = comm_slot(i); ++i)
    if (slot->comm.load(std::memory_order_acquire) != nullptr && slot->alive.load(std::memory_order_acquire)) visit(*slot);
}

// FNV-1a, 64-bit: the communicator ids.
uint64_t fnv1a(const void* data, size_t bytes, uint64_t seed = 0xcbf29ce484222325ull) noexcept;

}  // namespace proflaunch::nccl
