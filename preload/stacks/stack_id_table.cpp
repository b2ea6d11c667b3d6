#include "preload/stacks/stack_id_table.h"

#include <sys/mman.h>

namespace proflaunch::stacks {

bool StackIdTable::init(size_t capacity) noexcept {
  size_t slots = 16;
  while (slots < capacity) slots <<= 1;
  void* memory = mmap(nullptr, slots * sizeof(Slot), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) return false;
  // Anonymous pages read as zero: every slot starts empty.
  slots_ = static_cast<Slot*>(memory);
  mask_ = slots - 1;
  limit_ = slots / 4 * 3;
  used_ = 0;
  return true;
}

bool StackIdTable::insert(uint64_t hash, uint32_t id) noexcept {
  if (slots_ == nullptr || hash == 0 || id == 0 || used_ >= limit_) return false;
  for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
    const uint64_t stored = slots_[i].hash.load(std::memory_order_relaxed);
    if (stored == hash) return true;  // already there (the caller checked, but be safe)
    if (stored != 0) continue;
    slots_[i].id.store(id, std::memory_order_relaxed);
    slots_[i].hash.store(hash, std::memory_order_release);
    ++used_;
    return true;
  }
}

}  // namespace proflaunch::stacks
