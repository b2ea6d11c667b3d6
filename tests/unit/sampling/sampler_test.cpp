// The sampler's pieces in-process: the sample buffer (wrap-around, full,
// order), the module table, and the signal handler itself - called with the
// thread's own context, and then driven by a real timer - whose native walk
// must find the functions on the stack, dedup repeated stacks, and count a
// full buffer as lost.
#include <gtest/gtest.h>
#include <signal.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <sys/mman.h>

#include <cstring>
#include <vector>

#include "preload/sampling/cpu_sampling.h"
#include "preload/sampling/sample_buffer.h"
#include "preload/sampling/sampler_internal.h"
#include "preload/sampling/signal_safe_modules.h"
#include "preload/sampling/thread_sampler.h"

// Under ThreadSanitizer a signal's handler runs when TSan decides (it defers
// asynchronous signals to its own points) and TSan's instrumentation
// changes what a frame walk from a saved context finds; the shim samples no
// sanitized program (cpu_sampling.cpp), so the handler's walk and a real
// timer are checked in the other builds only.
#if defined(__SANITIZE_THREAD__)
#define SKIP_UNDER_TSAN() GTEST_SKIP() << "the shim does not sample under ThreadSanitizer"
#else
#define SKIP_UNDER_TSAN() (void)0
#endif

namespace proflaunch::sampling {
namespace {

TEST(SampleBuffer, EntriesComeBackInOrderAcrossTheEnd) {
  auto* buffer = new SampleBuffer();
  buffer->reset();
  uint64_t written = 0, read = 0;
  for (int round = 0; round < 3000; ++round) {
    const uint32_t bytes = align8(sizeof(SampleEntry) + (round % 37) * 8);
    uint64_t at = 0;
    uint8_t* slot = buffer->reserve(bytes, &at);
    ASSERT_NE(slot, nullptr) << round;
    auto* e = reinterpret_cast<SampleEntry*>(slot);
    std::memset(e, 0, sizeof *e);
    e->kind = kEntrySample;
    e->bytes = bytes;
    e->time_ns = written++;
    buffer->publish(at, bytes);
    if (round % 7 == 6)
      buffer->drain([&](const SampleEntry& entry) { EXPECT_EQ(entry.time_ns, read++); });
  }
  buffer->drain([&](const SampleEntry& entry) { EXPECT_EQ(entry.time_ns, read++); });
  EXPECT_EQ(read, written);
  EXPECT_TRUE(buffer->empty());
  delete buffer;
}

TEST(SampleBuffer, FullRefusesInsteadOfOverwriting) {
  auto* buffer = new SampleBuffer();
  buffer->reset();
  uint64_t at = 0;
  int accepted = 0;
  while (uint8_t* slot = buffer->reserve(4096, &at)) {
    auto* e = reinterpret_cast<SampleEntry*>(slot);
    e->kind = kEntrySample;
    e->bytes = 4096;
    buffer->publish(at, 4096);
    ++accepted;
  }
  EXPECT_EQ(accepted, static_cast<int>(kSampleBufferBytes / 4096));
  int drained = 0;
  buffer->drain([&](const SampleEntry&) { ++drained; });
  EXPECT_EQ(drained, accepted);
  EXPECT_NE(buffer->reserve(4096, &at), nullptr);
  delete buffer;
}

TEST(CodeRanges, FindTheCodeOfThisTest) {
  refresh_code_ranges(true);
  CodeRange range;
  ASSERT_EQ(find_code_range(reinterpret_cast<uintptr_t>(&refresh_code_ranges), &range), RangeLookup::kFound);
  EXPECT_NE(range.eh_frame_hdr, nullptr);
  int on_stack = 0;
  EXPECT_EQ(find_code_range(reinterpret_cast<uintptr_t>(&on_stack), &range), RangeLookup::kNotFound);
}

void prepare_sampler() {
  static bool ready = [] {
    g_sampler.signal_number = SIGRTMAX - 2;
    g_sampler.period_ns = 1000000;  // 1 kHz of CPU time
    g_sampler.depth = 32;
    struct sigaction action {};
    action.sa_sigaction = on_sampling_signal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(g_sampler.signal_number, &action, nullptr);
    refresh_code_ranges(true);
    g_sampler.state.store(static_cast<uint8_t>(format::CpuSamplingState::kOn));
    return init_thread_samplers(g_sampler.signal_number, g_sampler.period_ns);
  }();
  ASSERT_TRUE(ready);
}

struct Drained {
  std::vector<std::vector<uint64_t>> native;  // content entries
  uint64_t entries = 0;
  uint64_t hash_only = 0;
  uint64_t periods = 0;
};

Drained drain(ThreadSampler& state) {
  Drained d;
  state.buffer.drain([&](const SampleEntry& e) {
    ++d.entries;
    d.periods += e.periods;
    if (e.flags & kNativeContent) {
      const auto* pcs = reinterpret_cast<const uint64_t*>(&e + 1);
      d.native.emplace_back(pcs, pcs + e.native_count);
    } else if (e.flags & kHasNative) {
      ++d.hash_only;
    }
  });
  return d;
}

__attribute__((noinline)) void sample_here(ThreadSampler* state) {
  ucontext_t context;
  getcontext(&context);
  siginfo_t info{};
  info.si_code = SI_TIMER;
  info.si_value.sival_ptr = state;
  on_sampling_signal(g_sampler.signal_number, &info, &context);
  asm volatile("" ::: "memory");  // no tail call: this frame must stay
}

__attribute__((noinline)) void outer_caller(ThreadSampler* state) {
  sample_here(state);
  asm volatile("" ::: "memory");
}

TEST(SamplingHandler, WalksFromTheInterruptedContextAndSendsAStackOnce) {
  SKIP_UNDER_TSAN();
  prepare_sampler();
  arm_current_thread(g_sampler.signal_number, g_sampler.period_ns);
  ThreadSampler* state = tls_thread_sampler;
  ASSERT_NE(state, nullptr);
  // No CPU-time signal while we look: block it.
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, g_sampler.signal_number);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  drain(*state);
  for (int i = 0; i < 5; ++i) outer_caller(state);
  const Drained d = drain(*state);
  EXPECT_EQ(d.entries, 5u);
  ASSERT_EQ(d.native.size(), 1u) << "a repeated stack must be sent once";
  EXPECT_EQ(d.hash_only, 4u);
  const std::vector<uint64_t>& pcs = d.native.front();
  ASSERT_GE(pcs.size(), 3u);
  // The leaf is in sample_here (pc + 1), its caller's return address in
  // outer_caller, and the walk goes on past this test's frame.
  auto inside = [](uint64_t address, void (*function)(ThreadSampler*)) {
    const auto start = reinterpret_cast<uint64_t>(function);
    return address > start && address < start + 512;
  };
  EXPECT_TRUE(inside(pcs[0], sample_here));
  EXPECT_TRUE(inside(pcs[1], outer_caller));
  EXPECT_GT(pcs.size(), 4u) << "the walk stopped at the test's own frames";
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

TEST(SamplingHandler, AFullBufferCountsLostSamples) {
  prepare_sampler();
  arm_current_thread(g_sampler.signal_number, g_sampler.period_ns);
  ThreadSampler* state = tls_thread_sampler;
  ASSERT_NE(state, nullptr);
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, g_sampler.signal_number);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  drain(*state);
  const uint64_t lost_before = state->lost_full.load();
  // A repeated stack takes 48 bytes: 8000 of them do not fit in 256 KiB.
  for (int i = 0; i < 8000; ++i) outer_caller(state);
  EXPECT_GT(state->lost_full.load(), lost_before);
  const Drained d = drain(*state);
  EXPECT_EQ(d.entries + (state->lost_full.load() - lost_before), 8000u) << "every sample kept or counted";
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

TEST(SamplingHandler, ARealTimerSamplesThisThreadByItsCpuTime) {
  SKIP_UNDER_TSAN();
  prepare_sampler();
  arm_current_thread(g_sampler.signal_number, g_sampler.period_ns);
  ThreadSampler* state = tls_thread_sampler;
  ASSERT_NE(state, nullptr);
  ASSERT_TRUE(state->armed.load());
  drain(*state);
  timespec start{}, now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  uint64_t periods = 0;
  volatile uint64_t x = 0;
  do {
    for (int i = 0; i < 100000; ++i) x = x + i;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    periods += drain(*state).periods;
  } while ((now.tv_sec - start.tv_sec) * 1000000000ll + (now.tv_nsec - start.tv_nsec) < 300000000ll);
  periods += drain(*state).periods;
  // 300 ms of CPU at 1 kHz: ~300 periods (signals come at the kernel's tick).
  EXPECT_GT(periods, 200u);
  EXPECT_LT(periods, 400u);
}

void on_segv(int, siginfo_t* info, void*) {
  recover_from_sampler_fault(SIGSEGV, info);
  _exit(99);  // not the sampler's: the test would have crashed anyway
}

TEST(SamplingHandler, AFaultInItsReadsIsRecoveredAndCounted) {
  prepare_sampler();
  arm_current_thread(g_sampler.signal_number, g_sampler.period_ns);
  ThreadSampler* state = tls_thread_sampler;
  ASSERT_NE(state, nullptr);
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, g_sampler.signal_number);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  drain(*state);
  // A "stack" whose words cannot be read, and a context that points into it
  // at the first instruction of a function (CFA = rsp + 8: the return
  // address is read at rsp).
  void* hole = mmap(nullptr, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(hole, MAP_FAILED);
  const uintptr_t saved_low = state->stack_low, saved_high = state->stack_high;
  state->stack_low = reinterpret_cast<uintptr_t>(hole);
  state->stack_high = state->stack_low + 8192;
  struct sigaction net {}, previous {};
  net.sa_sigaction = on_segv;
  net.sa_flags = SA_SIGINFO;
  sigemptyset(&net.sa_mask);
  sigaction(SIGSEGV, &net, &previous);
  g_sampler.fault_net.store(true);
  ucontext_t context;
  getcontext(&context);
  context.uc_mcontext.gregs[REG_RIP] = static_cast<greg_t>(reinterpret_cast<uintptr_t>(&outer_caller));
  context.uc_mcontext.gregs[REG_RSP] = static_cast<greg_t>(state->stack_low + 4096);
  siginfo_t info{};
  info.si_code = SI_TIMER;
  info.si_value.sival_ptr = state;
  const uint64_t unsafe_before = state->lost_unsafe.load();
  on_sampling_signal(g_sampler.signal_number, &info, &context);
  EXPECT_EQ(state->lost_unsafe.load(), unsafe_before + 1) << "the faulting sample is counted as unsafe";
  EXPECT_EQ(drain(*state).entries, 0u) << "and nothing half-written is published";
  EXPECT_EQ(state->reading, 0);
  // The thread goes on sampling.
  state->stack_low = saved_low;
  state->stack_high = saved_high;
  g_sampler.fault_net.store(false);
  sigaction(SIGSEGV, &previous, nullptr);
  munmap(hole, 8192);
  outer_caller(state);
  EXPECT_EQ(drain(*state).entries, 1u);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

}  // namespace
}  // namespace proflaunch::sampling
