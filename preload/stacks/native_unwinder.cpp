#include "preload/stacks/native_unwinder.h"

#include <dlfcn.h>
#include <link.h>

#if defined(__x86_64__)
// Types and symbol names only: libunwind is loaded at run time.
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

#include "preload/base/log.h"
#include "preload/config.h"
#include "preload/intercept/dlsym_interposer.h"
#include "preload/intercept/libc_symbols.h"
#include "preload/stacks/stack_catalog.h"

namespace proflaunch::stacks {
namespace {

using Run = WalkedStackCache::Run;
using UnwBacktraceFn = int (*)(void** buffer, int size);
using DlopenFn = void* (*)(const char* file, int mode);

UnwBacktraceFn g_unw_backtrace = nullptr;
#if defined(__x86_64__)
// libunwind's step-by-step API, used instead of unw_backtrace where it is
// there: unw_backtrace keeps a per-thread cache whose pthread key destructor
// runs in the last round of a thread's exit, after ThreadSanitizer has torn
// down the thread's state, and its mutex_lock then crashes a TSan-built
// program (seen in stacks_native_walker_test under TSan). A cursor on the
// stack leaves nothing per thread behind.
#define PROFLAUNCH_SYMBOL_NAME(name) PROFLAUNCH_SYMBOL_NAME2(name)
#define PROFLAUNCH_SYMBOL_NAME2(name) #name
struct LibunwindSteps {
  int (*getcontext)(unw_context_t*) = nullptr;
  int (*init_local)(unw_cursor_t*, unw_context_t*) = nullptr;
  int (*step)(unw_cursor_t*) = nullptr;
  int (*get_reg)(unw_cursor_t*, unw_regnum_t, unw_word_t*) = nullptr;
  bool ready() const { return getcontext != nullptr && init_local != nullptr && step != nullptr && get_reg != nullptr; }
};
LibunwindSteps g_steps;

// unw_backtrace's slow path, without its per-thread cache: the first
// address is this function's own (left out as the shim's, as unw_backtrace's
// own frame was as libunwind's).
__attribute__((noinline)) int step_backtrace(void** buffer, int size) {
  unw_context_t context;
  unw_cursor_t cursor;
  if (g_steps.getcontext(&context) != 0 || g_steps.init_local(&cursor, &context) != 0) return 0;
  int n = 0;
  while (n < size) {
    unw_word_t ip = 0;
    if (g_steps.get_reg(&cursor, UNW_REG_IP, &ip) < 0) break;
    buffer[n++] = reinterpret_cast<void*>(static_cast<uintptr_t>(ip));
    if (g_steps.step(&cursor) <= 0) break;
  }
  return n;
}
#endif
bool g_initialized = false;
bool g_walker_ready = false;

struct AddressRange {
  uintptr_t start = 0;
  uintptr_t end = 0;
  bool contains(uintptr_t address) const { return address >= start && address < end; }
};
AddressRange g_shim;
AddressRange g_libunwind;

// Frames walked beyond `depth` to leave out the shim's own: the capture,
// the hook, the exported wrapper and, for a runtime call, the runtime hook's
// (4 to 10 in practice). A stack that had more is marked truncated. The
// walker stops once it has depth + 1 frames to keep, whatever the budget;
// libunwind walks all it is asked for, but only for the stacks the walker
// hands it, and a generous budget keeps its answer the walker's (a stack cut
// by the budget is marked truncated even when it was not).
constexpr uint32_t kOmittedFramesBudget = 24;
constexpr uint32_t kMaxWalkFrames = kMaxStackDepth + kOmittedFramesBudget + 1;
uint32_t max_walk_frames(uint32_t depth) { return depth + kOmittedFramesBudget + 1; }

// Levels of "first difference" keys followed before walking (each is one
// check of a stored walk that shared the frames up to there).
constexpr int kMaxKeyLevels = 6;
// Stored walks met again further up that a walk checks before giving up on
// rejoining one.
constexpr int kMaxRejoinAttempts = 4;

struct RangeSearch {
  uintptr_t inside;
  AddressRange found;
};

// The extent of the loaded object that contains `search->inside`.
int find_object(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<RangeSearch*>(data);
  AddressRange range{UINTPTR_MAX, 0};
  bool contains = false;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    if (phdr.p_type != PT_LOAD) continue;
    const uintptr_t start = info->dlpi_addr + phdr.p_vaddr;
    const uintptr_t end = start + phdr.p_memsz;
    if (start < range.start) range.start = start;
    if (end > range.end) range.end = end;
    if (search->inside >= start && search->inside < end) contains = true;
  }
  if (!contains) return 0;
  search->found = range;
  return 1;
}

AddressRange object_containing(const void* address) {
  RangeSearch search{reinterpret_cast<uintptr_t>(address), {}};
  dl_iterate_phdr(find_object, &search);
  return search.found;
}

// For libunwind's stacks; the walker reads it from its rule cache.
bool omitted(uint64_t pc) { return g_shim.contains(pc) || g_libunwind.contains(pc); }

// The state of the calling function at this point: an address inside it,
// its stack pointer and %rbp. Inlined, so that it is the caller's; the
// caller must stay on the stack (no tail call) while its frame is walked.
__attribute__((always_inline)) inline WalkedFrame current_state() {
  WalkedFrame state{};
  asm volatile(
      "lea 0(%%rip), %0\n\t"
      "mov %%rsp, %1\n\t"
      "mov %%rbp, %2"
      : "=r"(state.pc), "=r"(state.sp), "=r"(state.bp));
  state.flags = kFrameOmitted;  // always the shim's
  return state;
}

struct WalkResult {
  uint32_t count = 0;
  bool ended = false;
  bool unsupported = false;
  bool uses_rbp = false;  // some frame's CFA comes from %rbp
};

// Flags a stored frame keeps when copied into another walk: those of its
// code and of how it was reached, not those derived from the rest of the
// walk it was in.
constexpr uint32_t kCopiedFlags = kFrameOmitted | kFrameCfaFromBp | kFrameBpFromSlot;

uint32_t kept_frames(const WalkedFrame* frames, uint32_t count) {
  uint32_t kept = 0;
  for (uint32_t i = 0; i < count; ++i) kept += (frames[i].flags & kFrameOmitted) == 0;
  return kept;
}

// The stored walk `nearest` has this walk's last frame, frames[n - 1], at
// `at`, and its frames above it are still on the stack: append them, up to
// where this walk would stop by itself. Not when this walk must go further
// than the stored one went (it goes on by itself: the stored walk's last
// %rbp may not be the stack's). `kept` counts frames[0, n - 1) kept. True
// when appended.
bool rejoin(const Run& nearest, uint32_t at, uint32_t depth, uint32_t max_frames, WalkedFrame* frames, uint32_t& n,
            uint32_t& kept, bool& ended) {
  const WalkedFrame* theirs = const_cast<Run&>(nearest).frames();
  const uint32_t their_count = nearest.frame_count;
  if (check_walk_from(theirs, at + 1, their_count).index != their_count) return false;
  uint32_t kept_then = kept, count = n, last = at;
  bool cut;
  for (;;) {  // as walk() below, through their frames
    kept_then += (theirs[last].flags & kFrameOmitted) == 0;
    if (kept_then > depth || count == max_frames) {
      cut = true;
      break;
    }
    if (last + 1 == their_count) {
      if ((nearest.flags & WalkedStackCache::kRunEnded) == 0) return false;
      cut = false;
      break;
    }
    ++last;
    ++count;
  }
  // The same code: the same rule. (How the frame was reached is this walk's.)
  constexpr uint32_t kOfTheCode = kFrameOmitted | kFrameCfaFromBp;
  frames[n - 1].flags = (frames[n - 1].flags & ~kOfTheCode) | (theirs[at].flags & kOfTheCode);
  for (uint32_t i = at + 1; i <= last; ++i) {
    frames[n] = theirs[i];
    frames[n++].flags &= kCopiedFlags;
  }
  kept = kept_then;
  ended = !cut;
  return true;
}

// Walks the calling thread's stack from `start` into `frames`, until it has
// depth + 1 frames of its own (the last proves the stack deeper than
// `depth`), reaches the outermost frame, or has walked `max_frames`.
// `nearest` (optional) is a stored walk whose first `matched` frames are
// this stack's: they are taken as they are, and the walk rejoins `nearest`
// where it meets one of its frames again.
//
// A step: the rule of the frame's code (cached per thread), CFA = %rsp or
// %rbp + offset, the return address at CFA-8, %rbp unchanged or from its
// slot. The rule of a frame is looked up at its pc minus one: a return
// address follows its call, whose state it shares; the first frame's pc
// follows an instruction that did not move the stack.
WalkResult walk(FrameRuleCache& rules, const WalkedFrame& start, uint32_t depth, Run* nearest, uint32_t matched,
                WalkedFrame* frames, uint32_t max_frames, NativeUnwindStats* stats) {
  WalkResult result;
  uint32_t n;
  if (nearest != nullptr && matched > 0) {
    // Their states are this stack's, except maybe %rbp where their walk did
    // not need it: follow it again through the same (checked) slots.
    const WalkedFrame* theirs = nearest->frames();
    frames[0] = theirs[0];
    frames[0].bp = start.bp;
    frames[0].flags &= kCopiedFlags;
    for (n = 1; n < matched; ++n) {
      frames[n] = theirs[n];
      frames[n].flags &= kCopiedFlags;
      frames[n].bp = (theirs[n].flags & kFrameBpFromSlot) != 0 ? read_word(theirs[n].sp + theirs[n].bp_slot)
                                                              : frames[n - 1].bp;
    }
    if (stats != nullptr) ++stats->reused_prefix;
  } else {
    frames[0] = start;
    n = 1;
    nearest = nullptr;
  }
  uint32_t kept = kept_frames(frames, n - 1);  // the last frame is counted below
  uint32_t search = matched;                   // in nearest: its first frame not below frames[n - 1]
  int rejoin_attempts = 0;
  // The state of the last frame, in registers: reading it back from the
  // frame just stored would add a store-to-load delay to every step.
  uint64_t pc = frames[n - 1].pc, sp = frames[n - 1].sp, bp = frames[n - 1].bp;
  for (;;) {
    WalkedFrame& last = frames[n - 1];
    const CachedFrameRule& rule = rules.rule_for(pc - 1);
    if (rule.flags & CachedFrameRule::kLeftOut) {
      last.flags |= kFrameOmitted;
    } else {
      last.flags &= ~kFrameOmitted;
      ++kept;
    }
    if (kept > depth || n == max_frames) break;
    if (__builtin_expect(rule.kind != FrameRuleKind::kStandard, 0)) {
      if (rule.kind == FrameRuleKind::kOutermost) result.ended = true;
      else result.unsupported = true;
      break;
    }
    const uint64_t cfa = ((rule.flags & CachedFrameRule::kCfaFromRbp) ? bp : sp) + static_cast<int64_t>(rule.cfa_offset);
    // A caller's frame is above its callee's. Anything else is broken unwind
    // information or a stack switch: libunwind decides.
    if (__builtin_expect(cfa <= sp || (cfa & 7) != 0, 0)) {
      result.unsupported = true;
      break;
    }
    const uint64_t return_address = read_word(cfa - 8);
    if (__builtin_expect(return_address < 0x4000, 0)) {  // libunwind's end-of-stack heuristic: its call
      result.unsupported = true;
      break;
    }
    if (rule.flags & CachedFrameRule::kCfaFromRbp) last.flags |= kFrameCfaFromBp;
    WalkedFrame& next = frames[n++];
    if (rule.flags & CachedFrameRule::kRbpSaved) {
      bp = read_word(cfa + rule.rbp_offset);
      next.bp_slot = rule.rbp_offset;
      next.flags = kFrameBpFromSlot;
    } else {
      next.bp_slot = 0;
      next.flags = 0;
    }
    pc = return_address;
    sp = cfa;
    next.pc = pc;
    next.sp = sp;
    next.bp = bp;
    if (nearest == nullptr || rejoin_attempts == kMaxRejoinAttempts) continue;
    const WalkedFrame* theirs = nearest->frames();
    while (search < nearest->frame_count && theirs[search].sp < sp) ++search;
    if (search < nearest->frame_count && same_state(theirs[search], next)) {
      ++rejoin_attempts;
      if (rejoin(*nearest, search, depth, max_frames, frames, n, kept, result.ended)) {
        if (stats != nullptr) ++stats->reused_suffix;
        break;
      }
    }
  }
  result.count = n;
  for (uint32_t i = 0; i + 1 < n && !result.uses_rbp; ++i) result.uses_rbp = (frames[i].flags & kFrameCfaFromBp) != 0;
  return result;
}

NativeStack stack_of_walk(const WalkedFrame* frames, uint32_t count, bool ended, uint32_t depth, uint64_t* out) {
  NativeStack stack;
  for (uint32_t i = 0; i < count; ++i) {
    if (frames[i].flags & kFrameOmitted) continue;
    if (stack.count == depth) {
      stack.truncated = true;
      break;
    }
    out[stack.count++] = frames[i].pc;
  }
  if (!ended) stack.truncated = true;
  return stack;
}

uint64_t root_key(const WalkedFrame& start, uint32_t depth) {
  return root_walk_key(start.pc, start.sp ^ (uint64_t{depth} << 56));
}

// Walks a stack no stored walk matched and stores it under `key`. nullptr:
// a frame the walker cannot step.
__attribute__((noinline)) Run* walk_and_store(ThreadUnwindState& state, const WalkedFrame& start, uint32_t depth,
                                              uint64_t key, Run* nearest, uint32_t matched) {
  WalkedStackCache& cache = state.stacks;
  const uint32_t max_frames = max_walk_frames(depth);
  if (!cache.make_room(max_frames)) {  // emptied: nothing stored is left to reuse
    ++state.stats.cache_resets;
    nearest = nullptr;
    key = root_key(start, depth);
  }
  ++state.stats.walked;
  WalkedFrame* frames = cache.next_frames();
  const WalkResult walked = walk(state.rules, start, depth, nearest, matched, frames, max_frames, &state.stats);
  // Without libunwind the stack ends at the frame the walker cannot step
  // (kept, not ended: marked truncated) rather than being lost: on an H200
  // image without libunwind, cuBLAS's launches from PyTorch's autograd thread
  // had no stack at all.
  if (walked.unsupported && g_unw_backtrace != nullptr) return nullptr;
  if (walked.uses_rbp) mark_needed_bp(frames, walked.count);
  return cache.commit(key, walked.count, walked.ended ? uint32_t{WalkedStackCache::kRunEnded} : 0u, 0);
}

// The stored walk equal to the calling thread's stack from `start`, walking
// it if there is none. nullptr: libunwind's business.
inline Run* find_or_walk(ThreadUnwindState& state, const WalkedFrame& start, uint32_t depth) {
  uint64_t key = root_key(start, depth);
  Run* nearest = nullptr;
  uint32_t matched = 0;
  for (int level = 0; level < kMaxKeyLevels; ++level) {
    Run* run = state.stacks.find(key);
    if (run == nullptr) break;
    const WalkDifference difference = check_walk(run->frames(), run->frame_count, start);
    if (__builtin_expect(difference.index == run->frame_count, 1)) {
      ++state.stats.reused;
      return run;
    }
    if (difference.index > matched) {
      nearest = run;
      matched = difference.index;
    }
    key = child_walk_key(key, difference);
  }
  return walk_and_store(state, start, depth, key, nearest, matched);
}

NativeStack libunwind_stack(uint64_t* out, uint32_t depth) {
  NativeStack stack;
  if (g_unw_backtrace == nullptr) return stack;
  void* raw[kMaxWalkFrames];
  const int requested = static_cast<int>(max_walk_frames(depth));
  const int captured = g_unw_backtrace(raw, requested);
  for (int i = 0; i < captured; ++i) {
    const auto address = reinterpret_cast<uintptr_t>(raw[i]);
    if (omitted(address)) continue;
    if (stack.count == depth) {
      stack.truncated = true;
      break;
    }
    out[stack.count++] = address;
  }
  if (captured == requested) stack.truncated = true;  // the walk may have been cut short
  return stack;
}

__attribute__((noinline)) uint32_t libunwind_stack_id(ThreadUnwindState* state, uint32_t depth) {
  if (state != nullptr) ++state->stats.libunwind;
  uint64_t frames[kMaxStackDepth];
  const NativeStack stack = libunwind_stack(frames, depth);
  return stack.count != 0 ? native_stack_id(frames, stack) : 0;
}

__attribute__((noinline)) uint32_t define_run(Run& run, uint32_t depth) {
  uint64_t frames[kMaxStackDepth];
  const NativeStack stack =
      stack_of_walk(run.frames(), run.frame_count, (run.flags & WalkedStackCache::kRunEnded) != 0, depth, frames);
  run.stack_id = stack.count != 0 ? native_stack_id(frames, stack) : 0;
  return run.stack_id;
}

}  // namespace

bool init_native_unwinder() noexcept {
  if (g_initialized) return g_walker_ready || g_unw_backtrace != nullptr;
  g_initialized = true;
  g_shim = object_containing(reinterpret_cast<const void*>(&init_native_unwinder));
  FrameRuleCache::set_left_out_range(g_shim.start, g_shim.end);
  g_walker_ready = g_shim.end != 0 && init_thread_unwind_states();
  // libc's dlopen directly: the shim's exported dlopen is only for others.
  auto* real_dlopen = reinterpret_cast<DlopenFn>(intercept::find_libc_symbol("dlopen"));
  void* handle = real_dlopen != nullptr ? real_dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL) : nullptr;
  auto* backtrace =
      handle != nullptr ? reinterpret_cast<UnwBacktraceFn>(intercept::real_dlsym()(handle, "unw_backtrace")) : nullptr;
  if (backtrace != nullptr) {
    g_libunwind = object_containing(reinterpret_cast<const void*>(backtrace));
    g_unw_backtrace = backtrace;
#if defined(__x86_64__)
    auto find = [&](const char* name) { return intercept::real_dlsym()(handle, name); };
    g_steps.getcontext = reinterpret_cast<decltype(g_steps.getcontext)>(find(PROFLAUNCH_SYMBOL_NAME(unw_tdep_getcontext)));
    g_steps.init_local = reinterpret_cast<decltype(g_steps.init_local)>(find(PROFLAUNCH_SYMBOL_NAME(unw_init_local)));
    g_steps.step = reinterpret_cast<decltype(g_steps.step)>(find(PROFLAUNCH_SYMBOL_NAME(unw_step)));
    g_steps.get_reg = reinterpret_cast<decltype(g_steps.get_reg)>(find(PROFLAUNCH_SYMBOL_NAME(unw_get_reg)));
    if (g_steps.ready()) g_unw_backtrace = step_backtrace;
#endif
  } else if (g_walker_ready) {
    print_line("libunwind.so.8 cannot be loaded: a native stack ends at the first frame without standard "
               "unwind information");
  }
  return g_walker_ready || g_unw_backtrace != nullptr;
}

__attribute__((noinline)) uint32_t native_stack_id_here(uint32_t depth) noexcept {
  const WalkedFrame start = current_state();
  ThreadUnwindState* state = g_walker_ready ? thread_unwind_state() : nullptr;
  if (__builtin_expect(state != nullptr, 1)) {
    if (Run* run = find_or_walk(*state, start, depth)) {
      if (__builtin_expect(run->stack_id != 0, 1)) return run->stack_id;
      return define_run(*run, depth);
    }
  }
  return libunwind_stack_id(state, depth);
}

__attribute__((noinline)) NativeStack capture_native_stack(uint64_t* frames, uint32_t depth,
                                                           NativeWalker walker) noexcept {
  if (depth > kMaxStackDepth) depth = kMaxStackDepth;
  const WalkedFrame start = current_state();
  ThreadUnwindState* state = g_walker_ready && walker != NativeWalker::kLibunwind ? thread_unwind_state() : nullptr;
  if (state != nullptr && walker == NativeWalker::kCached) {
    if (Run* run = find_or_walk(*state, start, depth))
      return stack_of_walk(run->frames(), run->frame_count, (run->flags & WalkedStackCache::kRunEnded) != 0, depth,
                           frames);
  } else if (state != nullptr) {
    WalkedFrame walked[kMaxWalkFrames];
    const WalkResult result =
        walk(state->rules, start, depth, nullptr, 0, walked, max_walk_frames(depth), /*stats=*/nullptr);
    if (!result.unsupported || g_unw_backtrace == nullptr)
      return stack_of_walk(walked, result.count, result.ended, depth, frames);
  }
  if (state != nullptr) ++state->stats.libunwind;
  return libunwind_stack(frames, depth);
}

bool use_libunwind_for_testing(bool use) noexcept {
  static UnwBacktraceFn loaded = nullptr;
  if (g_unw_backtrace != nullptr) loaded = g_unw_backtrace;
  g_unw_backtrace = use ? loaded : nullptr;
  // Walks stored under the other setting (cut short, or not) are forgotten.
  g_code_generation.fetch_add(1, std::memory_order_acq_rel);
  return loaded != nullptr;
}

NativeUnwindStats native_unwind_stats() noexcept {
  return tls_unwind_state != nullptr ? tls_unwind_state->stats : NativeUnwindStats{};
}

}  // namespace proflaunch::stacks
