#include "preload/stacks/walked_stack_cache.h"

namespace proflaunch::stacks {

void mark_needed_bp(WalkedFrame* frames, uint32_t count) noexcept {
  static_assert(kFrameCfaFromBp == 2 && kFrameBpFromSlot == 4 && kFrameBpNeeded == 8 && kFrameCheckBp == 16);
  bool any_rbp_cfa = false;
  for (uint32_t i = 0; i < count; ++i) {
    any_rbp_cfa |= (frames[i].flags & kFrameCfaFromBp) != 0;
    frames[i].flags &= ~(kFrameBpNeeded | kFrameCheckBp);
  }
  if (!any_rbp_cfa || count < 2) return;  // the common case: no frame's CFA uses %rbp
  // needed(i) = uses(i) || (!from_slot(i+1) && needed(i+1)); the last
  // frame's %rbp is not needed; check(i+1) = from_slot(i+1) && needed(i+1).
  bool caller_needed = false;
  for (uint32_t i = count - 1; i-- > 0;) {
    WalkedFrame& caller = frames[i + 1];
    const bool caller_from_slot = (caller.flags & kFrameBpFromSlot) != 0;
    if (caller_from_slot && caller_needed) caller.flags |= kFrameCheckBp;
    const bool needed = (frames[i].flags & kFrameCfaFromBp) != 0 || (!caller_from_slot && caller_needed);
    if (needed) frames[i].flags |= kFrameBpNeeded;
    caller_needed = needed;
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
