#include "preload/osrt/blocking_call.h"

#include <dlfcn.h>

#include <cerrno>
#include <climits>

#include "preload/intercept/libc_symbols.h"
#include "preload/intercept/real_symbols.h"
#include "preload/osrt/descriptor_kind.h"
#include "preload/osrt/osrt.h"
#include "preload/record/emit.h"
#include "preload/stacks/stacks.h"

namespace proflaunch::osrt {

std::atomic<uint64_t> g_threshold_ticks{UINT64_MAX};
std::atomic<void*> g_real[kCallCount];

namespace {

uint64_t g_threshold_ns = UINT64_MAX;

// ns per tick, as the bits of a double: measured at start, refined on the
// cold path (a longer baseline is more exact). 1.0 when ticks are ns.
std::atomic<uint64_t> g_ns_per_tick_bits{0x3ff0000000000000ull};
std::atomic<uint64_t> g_refined_at_ns{0};

double ns_per_tick() noexcept {
  const uint64_t bits = g_ns_per_tick_bits.load(std::memory_order_relaxed);
  double value;
  __builtin_memcpy(&value, &bits, sizeof value);
  return value;
}

// The fast path compares ticks: a threshold 2 % low lets the cold path,
// which compares ns with the measured rate, decide the calls near it.
void set_rate(double ns_per_tick_now) noexcept {
  uint64_t bits;
  __builtin_memcpy(&bits, &ns_per_tick_now, sizeof bits);
  g_ns_per_tick_bits.store(bits, std::memory_order_relaxed);
  if (g_threshold_ns == UINT64_MAX) return;
  const double ticks = static_cast<double>(g_threshold_ns) / ns_per_tick_now * 0.98;
  g_threshold_ticks.store(ticks < 1.0 ? 0 : static_cast<uint64_t>(ticks), std::memory_order_relaxed);
}

double measured_ns_per_tick(const TickSample& now) noexcept {
  const uint64_t ticks = now.ticks - g_tick_origin.ticks;
  if (ticks == 0) return 1.0;
  return static_cast<double>(now.ns - g_tick_origin.ns) / static_cast<double>(ticks);
}

// Once a second at most, on the cold path: the rate over the whole run.
void refine_rate() noexcept {
  if (!g_ticks_are_tsc) return;
  const uint64_t now = now_ns();
  uint64_t last = g_refined_at_ns.load(std::memory_order_relaxed);
  if (now - last < 1000000000ull) return;
  if (!g_refined_at_ns.compare_exchange_strong(last, now, std::memory_order_relaxed)) return;
  set_rate(measured_ns_per_tick(take_tick_sample()));
}

int32_t clamp(long value) noexcept {
  if (value > INT32_MAX) return INT32_MAX;
  if (value < INT32_MIN) return INT32_MIN;
  return static_cast<int32_t>(value);
}

}  // namespace

void* resolve_early(Call call) noexcept {
  // The next definition, as after start: under a sanitizer that intercepts
  // locks, a lock taken before start must reach its interceptor as the
  // unlock (not hooked) does.
  void* function = intercept::find_next_symbol(row(call).symbol);
  void* expected = nullptr;
  if (function != nullptr)
    g_real[static_cast<size_t>(call)].compare_exchange_strong(expected, function, std::memory_order_relaxed);
  return g_real[static_cast<size_t>(call)].load(std::memory_order_relaxed);
}

void resolve_real_functions() noexcept {
  for (size_t i = 0; i < kCallCount; ++i) {
    void* next = intercept::resolve_next<void>(kCallRows[i].symbol);
    if (next == nullptr || intercept::is_own_address(next)) next = intercept::find_libc_symbol(kCallRows[i].symbol);
    if (next != nullptr) g_real[i].store(next, std::memory_order_relaxed);
  }
}

void start_timing(uint64_t threshold_ns) noexcept {
  g_threshold_ns = threshold_ns;
  if (threshold_ns == kOsrtOff) {
    g_threshold_ticks.store(UINT64_MAX, std::memory_order_relaxed);
    return;
  }
  if (!g_ticks_are_tsc) {
    set_rate(1.0);
    return;
  }
  // A first rate from the origin the shim took at load: at least 200 us
  // apart (a sample is good to ~0.1 us), waited out here if need be.
  TickSample now = take_tick_sample();
  while (now.ns - g_tick_origin.ns < 200000) now = take_tick_sample();
  g_refined_at_ns.store(now.ns, std::memory_order_relaxed);
  set_rate(measured_ns_per_tick(now));
}

void BlockingCall::finish(uint64_t end, long result, uint64_t object, format::WaitObjectKind kind,
                          const void* caller) noexcept {
  Outcome outcome{result, 0, object, kind};
  const int saved_errno = errno;
  const CallRow& call = row(call_);
  if (call.errors == Errors::kReturnsError) outcome.error = static_cast<int>(result);
  else if (result == -1) outcome.error = saved_errno;
  record_blocking_call(call_, begin_, end, outcome, caller);
  errno = saved_errno;
}

void record_blocking_call(Call call, uint64_t begin_ticks, uint64_t end_ticks, const Outcome& outcome,
                          const void* caller) noexcept {
  ReentrancyGuard guard;
  if (!guard.outermost()) return;
  refine_rate();
  const double duration_ns = static_cast<double>(end_ticks - begin_ticks) * ns_per_tick();
  if (duration_ns < static_cast<double>(g_threshold_ns)) return;
  // The shim's own waits on a program thread (its mutexes, the exit path's
  // wait for the writer) and a vfork child's (it shares the parent's
  // memory, rings included) are not the program's.
  if (intercept::is_own_address(caller) || excluded_caller(caller) || !runtime::owns_this_process()) return;
  format::WaitObjectKind kind = outcome.kind;
  if (kind == kDescriptor) {
    kind = descriptor_kind(static_cast<int>(outcome.object));
    // A read of a regular file or a block device takes its time copying
    // and reading the disk, not waiting for another party.
    if (kind == format::WaitObjectKind::kFile) return;
  }
  const CallRow& row_of_call = row(call);
  const uint64_t correlation = next_correlation_id();
  auto* record = emit<format::BlockingCallRecord>();
  if (record == nullptr) return;
  record->object_kind = static_cast<uint8_t>(kind);
  record->span = {begin_ticks, end_ticks, correlation, clamp(outcome.result), row_of_call.api, 0};
  record->object = outcome.object;
  record->error = outcome.error;
  commit();
  stacks::attach_stacks(correlation, format::StackPoint::kBlocking);
}

}  // namespace proflaunch::osrt
