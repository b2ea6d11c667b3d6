// The writer turns hook ticks into CLOCK_MONOTONIC ns: the result must agree
// with the clock read at the same moment, and stay monotonic across cycles.
#include "preload/tick_converter.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "preload/clock.h"

namespace proflaunch {
namespace {

struct Pair {
  uint64_t ticks;
  uint64_t ns;
};

// (ticks, clock) pairs for ~`ms` milliseconds. Each clock read is bracketed
// by two tick reads and kept only when they are close: a pair torn apart by a
// preemption says nothing about the converter.
std::vector<Pair> read_pairs(int ms) {
  std::vector<Pair> pairs;
  const uint64_t until = now_ns() + uint64_t(ms) * 1000000u;
  while (now_ns() < until) {
    const uint64_t before = now_ticks();
    const uint64_t ns = now_ns();
    const uint64_t after = now_ticks();
    const bool tight = !g_ticks_are_tsc || after - before < 1000;
    if (tight) pairs.push_back({before + (after - before) / 2, ns});
    for (int spin = 0; spin < 2000; ++spin) asm volatile("");
  }
  return pairs;
}

TEST(TickConverter, ConvertedTicksAgreeWithTheClockAndStayMonotonic) {
  init_tick_source();
  TickConverter converter;
  converter.sample();
  uint64_t previous_converted = 0;
  for (int cycle = 0; cycle < 4; ++cycle) {
    const std::vector<Pair> pairs = read_pairs(10);
    converter.sample();  // the writer samples, then drains what was made before
    ASSERT_FALSE(pairs.empty());
    for (const Pair& pair : pairs) {
      const uint64_t converted = converter.to_ns(pair.ticks);
      // A clock read takes ~25 ns and the sample brackets are tight: 2 us is
      // far beyond the error of a working converter and far below a broken one's.
      EXPECT_LT(std::llabs(static_cast<long long>(converted - pair.ns)), 2000)
          << "cycle " << cycle << (g_ticks_are_tsc ? " (tsc)" : " (clock)");
      EXPECT_GE(converted, previous_converted);
      previous_converted = converted;
    }
  }
}

// A short program: every record is made before the writer's first cycle, so
// the writer converts them with only the shim's start sample and its own
// first one to go by.
TEST(TickConverter, RecordsBeforeTheWritersFirstSampleConvertFromTheStartSample) {
  init_tick_source();
  const std::vector<Pair> pairs = read_pairs(5);
  TickConverter converter;
  converter.sample();
  ASSERT_FALSE(pairs.empty());
  for (const Pair& pair : pairs) {
    EXPECT_LT(std::llabs(static_cast<long long>(converter.to_ns(pair.ticks) - pair.ns)), 2000)
        << (g_ticks_are_tsc ? "(tsc)" : "(clock)");
  }
}

TEST(TickConverter, WithoutTheTscTicksAreNanoseconds) {
  setenv("PROFLAUNCH_TICKS", "clock", 1);
  init_tick_source();
  unsetenv("PROFLAUNCH_TICKS");
  EXPECT_FALSE(g_ticks_are_tsc);
  TickConverter converter;
  converter.sample();
  EXPECT_EQ(converter.to_ns(123456789), 123456789u);
  init_tick_source();
}

}  // namespace
}  // namespace proflaunch
