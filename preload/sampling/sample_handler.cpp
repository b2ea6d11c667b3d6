// The sampling signal's handler: async-signal-safe. No allocation, no lock,
// no dlsym, no libunwind, nothing of the stacks layer's per-thread caches
// (the interrupted code may be half-way through updating them): its own rule
// cache, its own module table (signal_safe_modules.h), plain memory reads
// bounded by the thread's stack, and the Python frame walk of the stacks
// layer (reads only). Everything goes into the thread's sample buffer.
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <time.h>
#include <ucontext.h>

#include <cstring>

#include "preload/base/guard.h"
#include "preload/sampling/sampler_internal.h"
#include "preload/sampling/signal_safe_modules.h"
#include "preload/sampling/thread_sampler.h"
#include "preload/stacks/eh_frame.h"
#include "preload/stacks/frame_hash.h"
#include "preload/stacks/python_frames.h"
#include "preload/state/runtime_state.h"

namespace proflaunch::sampling {
namespace {

using stacks::FrameRuleKind;

constexpr uint64_t kNativeSeed = 0x73616d706c650001ull;
constexpr uint64_t kPythonSeed = 0x73616d706c650002ull;

constexpr uint32_t kMaxEntryBytes =
    align8(sizeof(SampleEntry) + kWalkBudget * 8 +
           kMaxStackDepth * align4(sizeof(PythonFrameEntry) + kMaxFileTextBytes + kMaxFunctionTextBytes));

uint64_t clock_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

enum class Rule { kOk, kBusy };

// The rule at `pc`, from the thread's cache or the code's .eh_frame.
Rule rule_for(ThreadSampler& s, uintptr_t pc, CachedRule* out) {
  CachedRule& slot = s.rules[(pc ^ (pc >> 10)) & (kRuleSlots - 1)];
  if (slot.pc == pc && slot.kind != 0) {
    *out = slot;
    return Rule::kOk;
  }
  CodeRange range;
  const RangeLookup found = find_code_range(pc, &range);
  if (found == RangeLookup::kBusy) return Rule::kBusy;
  stacks::FrameRule rule{FrameRuleKind::kUnsupported};
  if (found == RangeLookup::kFound && range.eh_frame_hdr != nullptr) rule = stacks::eh_frame_rule(range.eh_frame_hdr, pc);
  if (rule.kind == FrameRuleKind::kStandard && (rule.rbp_offset < INT16_MIN || rule.rbp_offset > INT16_MAX))
    rule = stacks::FrameRule{FrameRuleKind::kUnsupported};
  slot.pc = pc;
  slot.kind = static_cast<uint8_t>(rule.kind);
  slot.cfa_offset = rule.cfa_offset;
  slot.rbp_offset = static_cast<int16_t>(rule.rbp_offset);
  slot.flags = static_cast<uint8_t>((rule.cfa_from_rbp ? kRuleCfaFromRbp : 0) | (rule.rbp_saved ? kRuleRbpSaved : 0) |
                                    (pc >= g_sampler.shim_start && pc < g_sampler.shim_end ? kRuleShim : 0));
  *out = slot;
  return Rule::kOk;
}

struct Walk {
  uint32_t count = 0;
  bool truncated = false;
  bool leaf_is_pc = false;
  bool busy = false;
};

bool on_stack(const ThreadSampler& s, uint64_t address) {
  return address >= s.stack_low && address + 8 <= s.stack_high;
}

uint64_t read_word(uint64_t address) {
  uint64_t value;
  std::memcpy(&value, reinterpret_cast<const void*>(address), sizeof value);
  return value;
}

// The interrupted thread's native stack from its registers, innermost first,
// without the shim's frames. The first address is the interrupted pc + 1.
Walk walk_native(ThreadSampler& s, uint64_t pc, uint64_t sp, uint64_t bp, uint64_t* out, uint32_t depth) {
  Walk walk;
  if (!on_stack(s, sp)) {  // an alternate signal stack, a coroutine's: the leaf alone
    out[0] = pc + 1;
    walk.count = 1;
    walk.leaf_is_pc = true;
    walk.truncated = true;
    return walk;
  }
  for (uint32_t step = 0; step < kWalkBudget; ++step) {
    CachedRule rule;
    if (rule_for(s, step == 0 ? pc : pc - 1, &rule) == Rule::kBusy) {
      walk.busy = true;
      return walk;
    }
    if ((rule.flags & kRuleShim) == 0) {
      if (walk.count == depth) {
        walk.truncated = true;
        return walk;
      }
      if (step == 0) walk.leaf_is_pc = true;
      out[walk.count++] = step == 0 ? pc + 1 : pc;
    }
    if (rule.kind == static_cast<uint8_t>(FrameRuleKind::kOutermost)) return walk;
    if (rule.kind != static_cast<uint8_t>(FrameRuleKind::kStandard)) {
      walk.truncated = true;
      return walk;
    }
    const uint64_t cfa = ((rule.flags & kRuleCfaFromRbp) ? bp : sp) + static_cast<int64_t>(rule.cfa_offset);
    if (cfa <= sp || (cfa & 7) != 0 || !on_stack(s, cfa - 8)) {
      walk.truncated = true;
      return walk;
    }
    const uint64_t return_address = read_word(cfa - 8);
    if (return_address < 0x4000) return walk;  // the end of the stack
    if (rule.flags & kRuleRbpSaved) {
      const uint64_t slot = cfa + static_cast<int64_t>(rule.rbp_offset);
      if (!on_stack(s, slot)) {
        walk.truncated = true;
        return walk;
      }
      bp = read_word(slot);
    }
    pc = return_address;
    sp = cfa;
  }
  walk.truncated = true;
  return walk;
}

// Whether `hash` is in the thread's set; `insert` adds it (clearing the set
// when 3/4 full: stacks are then sent again, which the writer accepts).
bool seen(uint64_t* set, uint32_t& count, uint64_t hash, bool insert) {
  if (hash == 0) hash = 1;
  uint32_t i = static_cast<uint32_t>(hash) & (kSeenSlots - 1);
  for (;;) {
    if (set[i] == hash) return true;
    if (set[i] == 0) break;
    i = (i + 1) & (kSeenSlots - 1);
  }
  if (insert) {
    if (count >= kSeenSlots / 4 * 3) {
      std::memset(set, 0, kSeenSlots * sizeof(uint64_t));
      count = 0;
      i = static_cast<uint32_t>(hash) & (kSeenSlots - 1);
    }
    set[i] = hash;
    ++count;
  }
  return false;
}

void count_lost(std::atomic<uint64_t>& counter, ThreadSampler& s, uint64_t now) {
  if (s.first_lost_ns.load(std::memory_order_relaxed) == 0) s.first_lost_ns.store(now, std::memory_order_relaxed);
  counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

}  // namespace

void on_sampling_signal(int, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  ThreadSampler* sp_state = tls_thread_sampler;
  if (sp_state == nullptr || info == nullptr || info->si_code != SI_TIMER || info->si_value.sival_ptr != sp_state ||
      sp_state->closed.load(std::memory_order_acquire) ||
      g_sampler.state.load(std::memory_order_acquire) != static_cast<uint8_t>(format::CpuSamplingState::kOn) ||
      // Between capture windows nothing is recorded, samples neither.
      (g_sampler.follows_recording && !runtime::recording())) {
    errno = saved_errno;
    return;
  }
  ThreadSampler& s = *sp_state;
  const uint64_t now = clock_ns(CLOCK_MONOTONIC);
  const uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  const uint32_t periods = 1 + static_cast<uint32_t>(info->si_overrun > 0 ? info->si_overrun : 0);

  uint64_t at = 0;
  uint8_t* slot = s.buffer.reserve(kMaxEntryBytes, &at);
  if (slot == nullptr) {
    count_lost(s.lost_full, s, now);
    errno = saved_errno;
    return;
  }
  auto* entry = reinterpret_cast<SampleEntry*>(slot);
  std::memset(entry, 0, sizeof *entry);
  entry->kind = kEntrySample;
  entry->periods = periods;
  entry->time_ns = now;
  entry->thread_cpu_ns = cpu;
  if (tls_guard_depth != 0 && tls_guard_depth < kProfilerThreadDepth) entry->flags |= kInTracedCall;

  // A fault in the reads below (memory unmapped under us: an object unloaded
  // by another thread, a Python frame half-updated) comes back here through
  // the shim's crash handler, when it is the installed one.
  const bool net = g_sampler.fault_net.load(std::memory_order_acquire);
  if (net) {
    if (sigsetjmp(s.fault_jump, 0) != 0) {
      s.reading = 0;
      count_lost(s.lost_unsafe, s, now);
      errno = saved_errno;
      return;
    }
    s.reading = 1;
  }

  const auto* uc = static_cast<const ucontext_t*>(context);
  auto* pcs = reinterpret_cast<uint64_t*>(slot + sizeof(SampleEntry));
  const Walk walk = walk_native(s, static_cast<uint64_t>(uc->uc_mcontext.gregs[REG_RIP]),
                                static_cast<uint64_t>(uc->uc_mcontext.gregs[REG_RSP]),
                                static_cast<uint64_t>(uc->uc_mcontext.gregs[REG_RBP]), pcs, g_sampler.depth);
  if (walk.busy) {
    s.reading = 0;
    count_lost(s.lost_unsafe, s, now);
    errno = saved_errno;
    return;
  }
  uint32_t used = sizeof(SampleEntry);
  uint64_t native_hash = 0;
  bool native_new = false;
  if (walk.count != 0) {
    stacks::FrameHasher hasher(kNativeSeed);
    for (uint32_t i = 0; i < walk.count; ++i) hasher.add(pcs[i]);
    hasher.add(uint64_t{walk.count} | uint64_t{walk.truncated} << 32 | uint64_t{walk.leaf_is_pc} << 33);
    native_hash = hasher.finish() | 1;
    entry->flags |= kHasNative | (walk.truncated ? kNativeTruncated : 0) | (walk.leaf_is_pc ? kLeafIsPc : 0);
    entry->native_count = static_cast<uint16_t>(walk.count);
    entry->native_hash = native_hash;
    native_new = !seen(s.native_seen, s.native_seen_count, native_hash, false);
    if (native_new) {
      entry->flags |= kNativeContent;
      used += walk.count * 8;
    }
  }

  const stacks::PythonKeys python = stacks::capture_python_keys(s.keys, g_sampler.depth);
  bool python_new = false;
  if (python.count != 0) {
    stacks::FrameHasher hasher(kPythonSeed);
    for (uint32_t i = 0; i < python.count; ++i) {
      hasher.add(s.keys[i].code);
      hasher.add(static_cast<uint64_t>(static_cast<uint32_t>(s.keys[i].instruction)) | uint64_t{s.keys[i].flags} << 32);
    }
    hasher.add(uint64_t{python.count} | uint64_t{python.truncated} << 32);
    entry->python_hash = hasher.finish() | 1;
    entry->python_count = static_cast<uint16_t>(python.count);
    entry->flags |= kHasPython | (python.truncated ? kPythonTruncated : 0);
    python_new = !seen(s.python_seen, s.python_seen_count, entry->python_hash, false);
    if (python_new) {
      entry->flags |= kPythonContent;
      for (uint32_t i = 0; i < python.count; ++i) {
        auto* frame = reinterpret_cast<PythonFrameEntry*>(slot + used);
        char* text = reinterpret_cast<char*>(frame + 1);
        const stacks::PythonFrameText described =
            stacks::describe_python_frame(s.keys[i], text, kMaxFileTextBytes, text + kMaxFileTextBytes, kMaxFunctionTextBytes);
        // The function's text moves down next to the file's.
        std::memmove(text + described.file_bytes, text + kMaxFileTextBytes, described.function_bytes);
        frame->line = described.line;
        frame->flags = s.keys[i].flags;
        frame->file_bytes = described.file_bytes;
        frame->function_bytes = described.function_bytes;
        used += align4(sizeof(PythonFrameEntry) + described.file_bytes + described.function_bytes);
      }
    }
  }
  s.reading = 0;
  entry->bytes = align8(used);
  s.buffer.publish(at, entry->bytes);
  // Marked as sent only once the entry that carries them is published.
  if (native_new) seen(s.native_seen, s.native_seen_count, native_hash, true);
  if (python_new) seen(s.python_seen, s.python_seen_count, entry->python_hash, true);
  errno = saved_errno;
}

void recover_from_sampler_fault(int, const siginfo_t*) noexcept {
  ThreadSampler* s = tls_thread_sampler;
  if (s == nullptr || s->reading == 0) return;
  s->reading = 0;
  siglongjmp(s->fault_jump, 1);
}

}  // namespace proflaunch::sampling
