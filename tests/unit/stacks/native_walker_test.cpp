// The shim's native stack walker and its memory of walked stacks, in-process:
//  - on every frame shape compilers emit, the walker finds what libunwind
//    finds (same frames, same truncation), and leaves the shapes it does not
//    step (stack realignment, signal frames) to libunwind;
//  - a stored walk is reused only for the same stack: call chains that reach
//    the same code at the same stack address through different callers, or
//    with a different frame pointer and a stale return address left where
//    the other chain had it, each get their own frames;
//  - the stored rules and walks are dropped when a library is unloaded and
//    another loaded at its address, whether through the shim's dlclose or as
//    seen in the loader's counters;
//  - per-thread memory is freed when a thread exits, kept right across a
//    thread that reuses another's stack, and after fork only the forking
//    thread's remains.
// The frames of this executable are left out as the shim's are; the chains
// live in libraries of their own (walker/).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "preload/config.h"
#include "preload/intercept/libc_symbols.h"
#include "preload/stacks/native_unwinder.h"
#include "preload/stacks/thread_unwind_state.h"

using Capture = void (*)(void*);
extern "C" {
void shape_recursion(int levels, Capture capture, void* context);
void shape_big_frame(Capture capture, void* context);
void shape_alloca(size_t bytes, Capture capture, void* context);
void shape_frame_pointer(int levels, Capture capture, void* context);
int shape_early_return(int early, Capture capture, void* context);
void shape_realigned(Capture capture, void* context);
void shape_signal(Capture capture, void* context);
void shape_branches(int levels, unsigned path, Capture capture, void* context);
void shape_call_through(void (*fn)(Capture, void*), Capture capture, void* context);
void chain_dispatch(Capture capture, void* context, void (*via)(Capture, void*));
void chain_via_a(Capture, void*);
void chain_via_b(Capture, void*);
void chain_deep_a(Capture, void*);
void chain_deep_b(Capture, void*);
void chain_fp_small(Capture, void*);
void chain_fp_large(Capture, void*);
void chain_fp_pair(Capture capture, void* first_context, void* second_context);
}

namespace proflaunch::stacks {
namespace {

struct Frames {
  NativeStack stack;
  uint64_t frames[kMaxStackDepth] = {};
  std::vector<uint64_t> list() const { return std::vector<uint64_t>(frames, frames + stack.count); }
};

// The same stack three ways, from one function (whose frames are left out).
struct Captures {
  explicit Captures(uint32_t depth_limit = kDefaultStackDepth) : depth(depth_limit) {}
  uint32_t depth;
  Frames libunwind, walk_only, cached;
};

void capture_three_ways(void* context) {
  auto* c = static_cast<Captures*>(context);
  c->libunwind.stack = capture_native_stack(c->libunwind.frames, c->depth, NativeWalker::kLibunwind);
  c->walk_only.stack = capture_native_stack(c->walk_only.frames, c->depth, NativeWalker::kWalkOnly);
  c->cached.stack = capture_native_stack(c->cached.frames, c->depth, NativeWalker::kCached);
}

// Without libunwind, whose own per-thread cache keeps the rules of unloaded
// code (it is never flushed) and would be wrong where the walker must not be.
void capture_walker_only(void* context) {
  auto* c = static_cast<Captures*>(context);
  c->walk_only.stack = capture_native_stack(c->walk_only.frames, c->depth, NativeWalker::kWalkOnly);
  c->cached.stack = capture_native_stack(c->cached.frames, c->depth, NativeWalker::kCached);
}

void capture_cached(void* context) {
  auto* c = static_cast<Captures*>(context);
  c->cached.stack = capture_native_stack(c->cached.frames, c->depth, NativeWalker::kCached);
}

std::string symbol_of(uint64_t address) {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(address - 1), &info) == 0 || info.dli_sname == nullptr) return "?";
  return info.dli_sname;
}

std::string describe(const Frames& f) {
  std::string text = std::to_string(f.stack.count) + (f.stack.truncated ? " frames, truncated:" : " frames:");
  for (uint32_t i = 0; i < f.stack.count; ++i) text += " " + symbol_of(f.frames[i]);
  return text;
}

// The walker and the cache agree with libunwind, frame for frame.
void expect_agree(const Captures& c, const std::string& what) {
  ASSERT_GT(c.libunwind.stack.count, 0u) << what;
  EXPECT_EQ(c.walk_only.list(), c.libunwind.list()) << what << "\nwalker:    " << describe(c.walk_only)
                                                    << "\nlibunwind: " << describe(c.libunwind);
  EXPECT_EQ(c.walk_only.stack.truncated, c.libunwind.stack.truncated) << what;
  EXPECT_EQ(c.cached.list(), c.libunwind.list()) << what << "\ncached:    " << describe(c.cached)
                                                 << "\nlibunwind: " << describe(c.libunwind);
  EXPECT_EQ(c.cached.stack.truncated, c.libunwind.stack.truncated) << what;
}

class NativeWalker : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_TRUE(init_native_unwinder()); }
};

TEST_F(NativeWalker, FindsWhatLibunwindFindsOnEveryCommonFrameShape) {
  const uint64_t libunwind_before = native_unwind_stats().libunwind;
  for (uint32_t depth : {8u, kDefaultStackDepth, kMaxStackDepth}) {
    const std::string at = " at depth " + std::to_string(depth);
    for (int levels : {0, 5, 40, 200}) {
      Captures c{depth};
      shape_recursion(levels, capture_three_ways, &c);
      expect_agree(c, "recursion " + std::to_string(levels) + at);
    }
    Captures big{depth};
    shape_big_frame(capture_three_ways, &big);
    expect_agree(big, "frame of 40000 bytes" + at);
    for (size_t bytes : {size_t{16}, size_t{5000}}) {
      Captures c{depth};
      shape_alloca(bytes, capture_three_ways, &c);
      expect_agree(c, "alloca " + std::to_string(bytes) + at);
    }
    Captures fp{depth};
    shape_frame_pointer(6, capture_three_ways, &fp);
    expect_agree(fp, "frame pointers" + at);
    Captures early{depth};
    shape_early_return(0, capture_three_ways, &early);
    expect_agree(early, "after an early-return epilogue" + at);
    Captures branches{depth};
    shape_branches(7, 0x5a, capture_three_ways, &branches);
    expect_agree(branches, "branches" + at);
    Captures chain{depth};
    chain_dispatch(capture_three_ways, &chain, chain_fp_small);
    expect_agree(chain, "hand-written frame pointer chain" + at);
  }
  // A stack shallower than the depth ends at the program's first frame, as
  // libunwind's does; a deeper one is cut and marked.
  Captures shallow{kMaxStackDepth};
  shape_recursion(3, capture_three_ways, &shallow);
  EXPECT_FALSE(shallow.walk_only.stack.truncated) << describe(shallow.walk_only);
  Captures deep{kDefaultStackDepth};
  shape_recursion(40, capture_three_ways, &deep);
  EXPECT_TRUE(deep.walk_only.stack.truncated);
  EXPECT_EQ(deep.walk_only.stack.count, kDefaultStackDepth);
  // ... and none of it needed libunwind.
  EXPECT_EQ(native_unwind_stats().libunwind, libunwind_before);
}

TEST_F(NativeWalker, ThreadsEndAtTheirFirstFrameAsWithLibunwind) {
  std::thread([] {
    Captures c{kMaxStackDepth};
    shape_recursion(4, capture_three_ways, &c);
    expect_agree(c, "on a thread");
    EXPECT_FALSE(c.walk_only.stack.truncated);
    EXPECT_EQ(native_unwind_stats().libunwind, 0u);
  }).join();
}

TEST_F(NativeWalker, FramesItCannotStepGoToLibunwind) {
  uint64_t before = native_unwind_stats().libunwind;
  Captures realigned;
  shape_realigned(capture_three_ways, &realigned);
  expect_agree(realigned, "stack realigned through a register");
  EXPECT_EQ(native_unwind_stats().libunwind, before + 2) << "walk-only and cached captures both handed over";

  before = native_unwind_stats().libunwind;
  Captures in_handler;
  shape_signal(capture_three_ways, &in_handler);
  expect_agree(in_handler, "in a signal handler");
  EXPECT_EQ(native_unwind_stats().libunwind, before + 2);
  bool through_shape_signal = false;
  for (uint32_t i = 0; i < in_handler.cached.stack.count; ++i)
    through_shape_signal |= symbol_of(in_handler.cached.frames[i]) == "shape_signal";
  EXPECT_TRUE(through_shape_signal) << describe(in_handler.cached);
}

// Without libunwind (a machine that lacks it: the H200 image had none), a
// stack the walker cannot step past ends there, marked truncated, instead of
// being lost: its frames are libunwind's up to that frame.
TEST_F(NativeWalker, WithoutLibunwindAStackEndsAtTheFrameItCannotStep) {
  Captures with;
  shape_realigned(capture_three_ways, &with);
  ASSERT_GT(with.libunwind.stack.count, 2u) << describe(with.libunwind);
  ASSERT_TRUE(use_libunwind_for_testing(false));
  Captures without;
  shape_realigned(capture_walker_only, &without);
  use_libunwind_for_testing(true);
  for (const Frames* f : {&without.walk_only, &without.cached}) {
    ASSERT_GT(f->stack.count, 0u) << "lost, not cut";
    EXPECT_TRUE(f->stack.truncated) << describe(*f);
    EXPECT_LT(f->stack.count, with.libunwind.stack.count) << describe(*f);
    const std::vector<uint64_t> full = with.libunwind.list();
    // The same code, reached the same way: the innermost frames match
    // libunwind's but for the return address inside the shape (another
    // capture call), so compare from the second frame on.
    for (uint32_t i = 1; i < f->stack.count; ++i)
      EXPECT_EQ(symbol_of(f->frames[i]), symbol_of(full[i])) << i << ": " << describe(*f);
  }
}

// `via` alternately `first` and `second`; every capture must be the stack it
// was taken on. Returns how many captures after the first round were reused
// from a stored walk.
uint64_t alternate(void (*first)(Capture, void*), void (*second)(Capture, void*), int rounds) {
  NativeUnwindStats before;
  std::vector<uint64_t> first_frames, second_frames;
  for (int i = 0; i < rounds; ++i) {
    if (i == 1) before = native_unwind_stats();
    for (auto via : {first, second}) {
      Captures c;
      chain_dispatch(capture_three_ways, &c, via);
      expect_agree(c, via == first ? "first chain, round " + std::to_string(i) : "second chain, round " + std::to_string(i));
      (via == first ? first_frames : second_frames) = c.cached.list();
    }
  }
  EXPECT_NE(first_frames, second_frames);
  return native_unwind_stats().reused - before.reused;
}

TEST_F(NativeWalker, TwoCallersOfTheSameCodeAtTheSameStackAddressKeepTheirOwnStacks) {
  // A -> shared -> capture and B -> shared -> capture: the capture starts at
  // the same %rsp and shared returns to the same address; only shared's own
  // return address (into A or B) differs.
  const NativeUnwindStats before = native_unwind_stats();
  EXPECT_EQ(alternate(chain_via_a, chain_via_b, 6), 10u) << "after one walk each, every capture is a stored walk";
  EXPECT_GE(native_unwind_stats().reused_prefix - before.reused_prefix, 1u)
      << "B's first walk should start where it parts from A's (same start, same first frames)";
  // The same, parting three frames further up.
  EXPECT_EQ(alternate(chain_deep_a, chain_deep_b, 6), 10u);
}

TEST_F(NativeWalker, SameReturnAddressesButAnotherFramePointerIsAnotherStack) {
  // Through chain_fp_small and then chain_fp_large the capture starts at the
  // same %rsp, and every return address slot the walk through
  // chain_fp_small read still holds what it read (chain_fp_large leaves the
  // old one in an unused local); but chain_fp_alloca's CFA comes from %rbp,
  // which differs.
  const uint64_t reused_before = native_unwind_stats().reused;
  for (int round = 0; round < 4; ++round) {
    Captures small, large;
    chain_fp_pair(capture_three_ways, &small, &large);
    expect_agree(small, "through chain_fp_small, round " + std::to_string(round));
    expect_agree(large, "through chain_fp_large, round " + std::to_string(round));
    EXPECT_NE(small.cached.list(), large.cached.list());
  }
  EXPECT_GE(native_unwind_stats().reused - reused_before, 6u) << "after the first round both are stored walks";
}

TEST_F(NativeWalker, ManyChainsPartingAndMeetingAtTheSameDepths) {
  // 64 call chains with equal frame sizes: every capture starts at the same
  // %rsp; chains part at one level and meet again where their paths agree.
  constexpr int kLevels = 6;
  std::vector<unsigned> paths(1u << kLevels);
  for (unsigned i = 0; i < paths.size(); ++i) paths[i] = i;
  std::mt19937 random(42);
  const NativeUnwindStats before = native_unwind_stats();
  for (int pass = 0; pass < 2; ++pass) {
    std::shuffle(paths.begin(), paths.end(), random);
    const uint64_t reused_before = native_unwind_stats().reused;
    for (unsigned path : paths) {
      Captures c;
      shape_branches(kLevels, path, capture_three_ways, &c);
      expect_agree(c, "path " + std::to_string(path));
    }
    if (pass == 1) {
      EXPECT_EQ(native_unwind_stats().reused - reused_before, paths.size());
    }
  }
  const NativeUnwindStats after = native_unwind_stats();
  EXPECT_GT(after.reused_prefix - before.reused_prefix, 0u);
  EXPECT_GT(after.reused_suffix - before.reused_suffix, 0u) << "walks should rejoin stored ones";
}

TEST_F(NativeWalker, MoreStacksThanTheCacheHoldsAreStillRight) {
  const NativeUnwindStats before = native_unwind_stats();
  for (int round = 0; round < 2; ++round)
    for (int levels = 0; levels < 300; ++levels) {
      Captures c{kMaxStackDepth};
      shape_recursion(levels, capture_three_ways, &c);
      expect_agree(c, "recursion " + std::to_string(levels));
    }
  EXPECT_GT(native_unwind_stats().cache_resets, before.cache_resets);
}

// --- unloading ---

struct SwapLibraries {
  std::string small = SWAP_LIBRARY_SMALL, large = SWAP_LIBRARY_LARGE;
};

using SwapCall = void (*)(Capture, void*);

// The stack through swap_call of the library at `handle`: swap_call's return
// address, then its true caller.
void expect_true_caller(SwapCall swap, const std::string& what) {
  Captures c;
  shape_call_through(swap, capture_walker_only, &c);
  for (const Frames* f : {&c.walk_only, &c.cached}) {
    ASSERT_GE(f->stack.count, 2u) << what;
    // The return address of swap_call's one call, then its caller.
    EXPECT_EQ(f->frames[0], reinterpret_cast<uint64_t>(swap) + 0x22) << what << ": " << describe(*f);
    EXPECT_EQ(symbol_of(f->frames[1]), "shape_call_through") << what << ": " << describe(*f);
    for (uint64_t pc : f->list()) EXPECT_NE(symbol_of(pc), "decoy_frame") << what << ": " << describe(*f);
  }
}

// Loads the small build, walks through it, unloads it with `unload`, loads
// the large build at the same address and walks through it.
void swap_and_walk(int (*unload)(void*)) {
  const SwapLibraries libraries;
  void* small = dlopen(libraries.small.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(small, nullptr) << dlerror();
  auto small_swap = reinterpret_cast<SwapCall>(dlsym(small, "swap_call"));
  ASSERT_NE(small_swap, nullptr);
  for (int i = 0; i < 2; ++i) expect_true_caller(small_swap, "small build");
  ASSERT_EQ(unload(small), 0);

  void* large = dlopen(libraries.large.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(large, nullptr) << dlerror();
  auto large_swap = reinterpret_cast<SwapCall>(dlsym(large, "swap_call"));
  if (large_swap != small_swap) {
    dlclose(large);
    GTEST_SKIP() << "the second library was mapped elsewhere: nothing to check";
  }
  for (int i = 0; i < 2; ++i) expect_true_caller(large_swap, "large build at the small build's address");
  dlclose(large);
}

TEST_F(NativeWalker, ALibraryLoadedWhereAnUnloadedOneWasIsWalkedWithItsOwnRules) {
  // dlclose here is the shim's (dlclose_interposer.cpp is linked into this test).
  swap_and_walk(dlclose);
}

TEST_F(NativeWalker, AnUnloadSeenOnlyInTheLoaderCountersAlsoDropsTheCaches) {
  // As when glibc unloads a module itself: libc's dlclose, then the writer
  // thread's periodic check.
  static auto* libc_dlclose = reinterpret_cast<int (*)(void*)>(intercept::find_libc_symbol("dlclose"));
  ASSERT_NE(libc_dlclose, nullptr);
  swap_and_walk([](void* handle) {
    const int result = libc_dlclose(handle);
    check_for_unloaded_code();
    return result;
  });
}

// --- threads and fork ---

TEST_F(NativeWalker, ThreadsFreeTheirMemoryWhenTheyExitAndReusedStacksStayRight) {
  capture_native_stack(Captures{}.cached.frames, 8);  // this thread's state exists
  const uint32_t live_before = live_thread_unwind_states();
  std::vector<uintptr_t> stack_addresses;
  for (int t = 0; t < 6; ++t) {
    // One after the other: glibc hands each the previous one's stack, so each
    // starts its captures where the last one took its own.
    std::thread([&stack_addresses, live_before, t] {
      int here;
      stack_addresses.push_back(reinterpret_cast<uintptr_t>(&here));
      EXPECT_EQ(alternate(t % 2 ? chain_via_a : chain_via_b, t % 2 ? chain_via_b : chain_via_a, 3), 4u);
      EXPECT_EQ(live_thread_unwind_states(), live_before + 1);
    }).join();
  }
  EXPECT_EQ(live_thread_unwind_states(), live_before);
  std::sort(stack_addresses.begin(), stack_addresses.end());
  EXPECT_NE(std::unique(stack_addresses.begin(), stack_addresses.end()), stack_addresses.end())
      << "no thread reused a stack: the reuse case was not exercised";
}

TEST_F(NativeWalker, AForkChildKeepsOnlyItsOwnThreadsMemory) {
  std::mutex mutex;
  std::condition_variable changed;
  bool ready = false, release = false;
  std::thread other([&] {
    Captures c;
    chain_dispatch(capture_cached, &c, chain_via_a);
    std::unique_lock<std::mutex> lock(mutex);
    ready = true;
    changed.notify_all();
    changed.wait(lock, [&] { return release; });
  });
  {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return ready; });
  }
  capture_native_stack(Captures{}.cached.frames, 8);
  ASSERT_GE(live_thread_unwind_states(), 2u);
  const pid_t child = fork();
  if (child == 0) {
    int failures = live_thread_unwind_states() == 1 ? 0 : 1;
    for (auto via : {chain_via_a, chain_via_b, chain_via_a}) {
      Captures c;
      chain_dispatch(capture_three_ways, &c, via);
      failures += c.cached.list() != c.libunwind.list() || c.libunwind.stack.count == 0;
    }
    _exit(failures);
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    release = true;
  }
  changed.notify_all();
  other.join();
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
}

}  // namespace
}  // namespace proflaunch::stacks
