// A thread's cache of frame rules (eh_frame.h) by code address, and of the
// loaded objects they came from. Lives in the thread's unwind state
// (thread_unwind_state.h), so it needs no lock; zero-filled memory is an
// empty cache.
//
// A rule is a property of the code at an address, so it stays true until
// that code is unloaded: the whole cache is cleared when the process unloads
// an object (thread_unwind_state.h: code generation). A "no rule here"
// answer (kUnsupported) is always safe to keep: it only sends a stack to
// libunwind.
#pragma once

#include <cstddef>
#include <cstdint>

#include "preload/stacks/eh_frame.h"

namespace proflaunch::stacks {

// A rule as the walker reads it, with whether the code is the shim's own
// (its frames are walked through but left out of stacks).
struct CachedFrameRule {
  enum Flags : uint8_t {
    kCfaFromRbp = 1u << 0,
    kRbpSaved = 1u << 1,
    kLeftOut = 1u << 2,
  };
  uintptr_t pc;
  int32_t cfa_offset;
  int16_t rbp_offset;
  FrameRuleKind kind;
  uint8_t flags;
};
static_assert(sizeof(CachedFrameRule) == 16);

class FrameRuleCache {
 public:
  // Frames whose code lies in [start, end) are marked kLeftOut. Set once,
  // before any thread walks.
  static void set_left_out_range(uintptr_t start, uintptr_t end) noexcept;

  // The rule of the instruction at `pc` (for a return address: pass the
  // address minus one, inside the call). Cold on a miss: dl_iterate_phdr
  // (the loader's list lock, never held while constructors run) and the
  // object's .eh_frame.
  const CachedFrameRule& rule_for(uintptr_t pc) noexcept {
    CachedFrameRule* set = sets_[set_of(pc)];
    if (__builtin_expect(set[0].pc == pc, 1)) return set[0];
    if (set[1].pc == pc) return set[1];
    return fill(set, pc);
  }

  void clear() noexcept;

 private:
  struct Module {
    uintptr_t start;
    uintptr_t end;
    const uint8_t* eh_frame_hdr;  // nullptr: the object has none
  };
  // Two ways per set: two hot addresses that share a set do not evict each
  // other on every walk.
  static constexpr size_t kSets = 512;
  static constexpr size_t kModules = 8;

  // Short: it is on the path from one frame to the next.
  static size_t set_of(uintptr_t pc) noexcept { return (pc ^ (pc >> 9)) & (kSets - 1); }
  const CachedFrameRule& fill(CachedFrameRule* set, uintptr_t pc) noexcept;
  const Module* module_of(uintptr_t pc) noexcept;

  CachedFrameRule sets_[kSets][2];
  Module modules_[kModules];
  uint32_t next_module_;
};

}  // namespace proflaunch::stacks
