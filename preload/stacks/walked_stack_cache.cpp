#include "preload/stacks/walked_stack_cache.h"

namespace proflaunch::stacks {

void mark_needed_bp(WalkedFrame* frames, uint32_t count) noexcept {
  // needed(i) = uses(i) || (needed(i+1) && !from_slot(i+1)), and the last
  // frame's %rbp is not needed; check(i) = needed(i) && from_slot(i). So
  // from each frame whose rule uses %rbp, go down while %rbp was passed up
  // unchanged, to the slot it was read from.
  for (uint32_t j = 0; j + 1 < count; ++j) {
    if ((frames[j].flags & kFrameCfaFromBp) == 0) continue;
    for (uint32_t i = j;; --i) {
      if (frames[i].flags & kFrameBpNeeded) break;  // already marked from here down
      frames[i].flags |= kFrameBpNeeded;
      if (frames[i].flags & kFrameBpFromSlot) {
        frames[i].flags |= kFrameCheckBp;
        break;
      }
      if (i == 0) break;  // the start state's %rbp: compared on entry
    }
  }
}

bool WalkedStackCache::make_room(uint32_t max_frames) noexcept {
  if (top_ + 1 + max_frames <= kArenaFrames && used_ < kTableSlots / 4 * 3) return true;
  clear();
  return false;
}

WalkedStackCache::Run* WalkedStackCache::commit(uint64_t key, uint32_t frame_count, uint32_t flags,
                                                uint32_t stack_id) noexcept {
  Run* run = &arena_[top_].run;
  run->frame_count = frame_count;
  run->flags = flags;
  run->stack_id = stack_id;
  run->key = key;
  size_t i = key & kTableMask;
  while (table_[i].key != 0 && table_[i].key != key) i = (i + 1) & kTableMask;
  if (table_[i].key == 0) ++used_;
  table_[i].key = key;
  table_[i].run = top_;
  top_ += 1 + frame_count;
  return run;
}

void WalkedStackCache::clear() noexcept {
  std::memset(table_, 0, sizeof table_);
  used_ = 0;
  top_ = 0;
}

}  // namespace proflaunch::stacks
