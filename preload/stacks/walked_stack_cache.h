// A thread's memory of the stacks it walked, so that a repeated call path is
// recognized by checking a few words instead of being unwound again.
//
// A walk (native_unwinder.cpp) goes from a state (pc, sp, rbp) to its
// caller's by a rule that depends only on the code at pc (eh_frame.h):
// CFA = sp or rbp + c, pc' = [CFA-8], rbp' = [CFA+o] or rbp, sp' = CFA.
// So a walk is a pure function of its start state, of the code, and of the
// words it read. A stored walk is reused only when the start state is the
// same and every word it read still holds the value it read: then, step by
// step, each address read is the same (it derives from equal states) and so
// is each value - the new walk IS the stored one. Nothing is assumed about
// "the same return address at the same stack address": two call chains that
// share both (A->C and B->C with equal frame sizes) differ in a word further
// up, and the check sees it. The code must not have changed: every stored
// walk is dropped when an object is unloaded (thread_unwind_state.h).
//
// The words read are the return address slots [sp-8] of every frame, and the
// saved %rbp slots where a later step uses %rbp (only rbp-based frames do:
// most code does not, so most walks check one word per frame). The check
// stops at the first difference, so it reads only addresses the walk itself
// would read.
//
// A walk that differs from every stored one in some word is keyed by that
// difference: the table maps the start state (pc, sp) to a walk, and
// (that key, index of the first differing word, the value found there) to
// the walk that had that value, and so on - alternating call sites at the
// same depth each find their own walk after one or two checks.
//
// Fixed memory, in the thread's unwind state: an arena of frames and an
// open-addressing table; when either is full everything is dropped and
// refilled (a thread with more distinct stacks than the arena holds walks
// more often, and stays correct).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace proflaunch::stacks {

enum WalkedFrameFlags : uint32_t {
  kFrameOmitted = 1u << 0,     // the shim's or libunwind's own frame: not in the stack
  kFrameCfaFromBp = 1u << 1,   // its rule computes the CFA from %rbp
  kFrameBpFromSlot = 1u << 2,  // its %rbp was read from sp + bp_slot
  kFrameBpNeeded = 1u << 3,    // the rest of the walk depends on its %rbp
  kFrameCheckBp = 1u << 4,     // BpFromSlot and BpNeeded: the check reads the slot
};

// One frame of a walk: the state in it, and how it was reached.
struct WalkedFrame {
  uint64_t pc;  // its return address (the first frame: an address in the capture)
  uint64_t sp;  // the stack pointer in it: the CFA of the frame below
  uint64_t bp;  // %rbp in it
  int32_t bp_slot;
  uint32_t flags;
};
static_assert(sizeof(WalkedFrame) == 32);

inline uint64_t read_word(uint64_t address) noexcept {
  uint64_t value;
  std::memcpy(&value, reinterpret_cast<const void*>(address), sizeof value);
  return value;
}

// Where a stored walk first differs from the stack: the frame index and the
// word found there (index == count: no difference).
struct WalkDifference {
  uint32_t index;
  uint64_t found;
};

// Checks frames [from, count) of a walk whose frame `from - 1` matched.
inline WalkDifference check_walk_from(const WalkedFrame* frames, uint32_t from, uint32_t count) noexcept {
  for (uint32_t i = from; i < count; ++i) {
    const WalkedFrame& frame = frames[i];
    const uint64_t return_address = read_word(frame.sp - 8);
    if (__builtin_expect(return_address != frame.pc, 0)) return {i, return_address};
    if (frame.flags & kFrameCheckBp) {
      const uint64_t bp = read_word(frame.sp + static_cast<int64_t>(frame.bp_slot));
      if (__builtin_expect(bp != frame.bp, 0)) return {i, ~bp};
    }
  }
  return {count, 0};
}

// Does the walk starting at `start` (a state of the current stack) equal the
// stored walk from its frame `at` on?
inline bool same_state(const WalkedFrame& stored, const WalkedFrame& start) noexcept {
  return stored.pc == start.pc && stored.sp == start.sp &&
         ((stored.flags & kFrameBpNeeded) == 0 || stored.bp == start.bp);
}

inline WalkDifference check_walk(const WalkedFrame* frames, uint32_t count, const WalkedFrame& start) noexcept {
  if (!same_state(frames[0], start)) return {0, start.bp ^ start.sp};
  return check_walk_from(frames, 1, count);
}

// Sets kFrameBpNeeded and kFrameCheckBp (clear on entry) from the other
// flags: a frame's %rbp matters when its own rule uses it, or when it is
// passed on unchanged to a caller whose %rbp matters. The last frame's %rbp
// never does (the walk stopped there). Nothing to do when no frame's rule
// uses %rbp (most code).
void mark_needed_bp(WalkedFrame* frames, uint32_t count) noexcept;

inline uint64_t mix_key(uint64_t h) noexcept {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h != 0 ? h : 1;
}
inline uint64_t root_walk_key(uint64_t pc, uint64_t sp) noexcept {
  return mix_key(pc * 0x9E3779B97F4A7C15ull ^ sp);
}
inline uint64_t child_walk_key(uint64_t parent, const WalkDifference& difference) noexcept {
  return mix_key(parent ^ mix_key(difference.found + (uint64_t{difference.index} << 48)));
}

// A stored walk: a header slot, then its frames, in the arena.
struct WalkedRun {
  uint32_t frame_count;
  uint32_t flags;     // kRunEnded
  uint32_t stack_id;  // 0: not known yet (the catalog could not define it)
  uint32_t unused;
  uint64_t key;
  uint64_t unused2;
  WalkedFrame* frames() noexcept;
};
static_assert(sizeof(WalkedRun) == sizeof(WalkedFrame));

union WalkedArenaSlot {
  WalkedRun run;
  WalkedFrame frame;
};

inline WalkedFrame* WalkedRun::frames() noexcept { return &(reinterpret_cast<WalkedArenaSlot*>(this) + 1)->frame; }

class WalkedStackCache {
 public:
  enum RunFlags : uint32_t { kRunEnded = 1u << 0 };  // reached the outermost frame
  using Run = WalkedRun;

  Run* find(uint64_t key) noexcept {
    for (size_t i = key & kTableMask;; i = (i + 1) & kTableMask) {
      if (table_[i].key == key) return &arena_[table_[i].run].run;
      if (table_[i].key == 0) return nullptr;
    }
  }

  // Room for a walk of `max_frames` and its table slot; false when the cache
  // had to be emptied to make it (every Run* found before is then invalid).
  bool make_room(uint32_t max_frames) noexcept;
  // Where the next walk is written (after make_room).
  WalkedFrame* next_frames() noexcept { return &arena_[top_ + 1].frame; }
  // Stores the walk written at next_frames() under `key` (replacing what
  // was there).
  Run* commit(uint64_t key, uint32_t frame_count, uint32_t flags, uint32_t stack_id) noexcept;

  void clear() noexcept;
  uint32_t runs() const noexcept { return used_; }

  static constexpr uint32_t kArenaFrames = 16384;  // 512 KiB: hundreds of deep stacks
  static constexpr size_t kTableSlots = 1024;

 private:
  static constexpr size_t kTableMask = kTableSlots - 1;
  struct Slot {
    uint64_t key;  // 0: empty
    uint32_t run;  // index of the Run in the arena
    uint32_t unused;
  };

  Slot table_[kTableSlots];
  uint32_t used_;
  uint32_t top_;
  WalkedArenaSlot arena_[kArenaFrames];
};

}  // namespace proflaunch::stacks
