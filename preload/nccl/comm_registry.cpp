#include "preload/nccl/comm_registry.h"

#include <mutex>

namespace proflaunch::nccl {
namespace {

constexpr size_t kSlots = 512;
constinit CommInfo g_slots[kSlots]{};
std::mutex g_insert_mutex;

size_t home_slot(const void* comm) {
  return (reinterpret_cast<uintptr_t>(comm) >> 4) * 0x9E3779B97F4A7C15ull % kSlots;
}

}  // namespace

uint64_t fnv1a(const void* data, size_t bytes, uint64_t seed) noexcept {
  uint64_t hash = seed;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) {
    hash ^= p[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

CommInfo* comm_slot(size_t index) noexcept { return index < kSlots ? &g_slots[index] : nullptr; }

CommInfo* find_comm(const void* comm) noexcept {
  if (comm == nullptr) return nullptr;
  const size_t home = home_slot(comm);
  for (size_t i = 0; i < kSlots; ++i) {
    CommInfo& slot = g_slots[(home + i) % kSlots];
    const void* held = slot.comm.load(std::memory_order_acquire);
    if (held == comm) return slot.alive.load(std::memory_order_acquire) ? &slot : nullptr;
    if (held == nullptr) return nullptr;
  }
  return nullptr;
}

CommInfo* register_comm(const void* comm, uint64_t comm_id, int32_t rank, int32_t nranks, int32_t device,
                        CUcontext context, format::CollectiveLibrary library) noexcept {
  if (comm == nullptr) return nullptr;
  std::lock_guard lock(g_insert_mutex);
  const size_t home = home_slot(comm);
  for (size_t i = 0; i < kSlots; ++i) {
    CommInfo& slot = g_slots[(home + i) % kSlots];
    const void* held = slot.comm.load(std::memory_order_relaxed);
    if (held != nullptr && held != comm) continue;
    // Published last: readers see a complete entry.
    slot.alive.store(false, std::memory_order_relaxed);
    slot.comm_id = comm_id;
    slot.rank = rank;
    slot.nranks = nranks;
    slot.device = device;
    slot.context = context;
    slot.library = library;
    slot.collectives.store(0, std::memory_order_relaxed);
    slot.splits.store(0, std::memory_order_relaxed);
    for (int p = 0; p < kMaxTrackedPeers; ++p) {
      slot.sends[p].store(0, std::memory_order_relaxed);
      slot.receives[p].store(0, std::memory_order_relaxed);
    }
    slot.comm.store(comm, std::memory_order_release);
    slot.alive.store(true, std::memory_order_release);
    return &slot;
  }
  return nullptr;
}

void forget_comm(const void* comm) noexcept {
  if (CommInfo* info = find_comm(comm)) info->alive.store(false, std::memory_order_release);
}

}  // namespace proflaunch::nccl
