// The writer turns hook ticks into CLOCK_MONOTONIC ns: the result must agree
// with the clock read at the same moment, and stay monotonic across cycles.
#include "preload/writer/tick_converter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "preload/base/clock.h"

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

// A scripted clock whose rate wanders, for hand-fed conversions: `g_now` is
// the present tick (the test moves it forward like time), and the source
// answers (true ns, tick) for it.
uint64_t g_now = 0;
uint64_t true_ns(uint64_t tick) {
  // 2 ns per tick below 2'000, 4 ns per tick above.
  return tick <= 2'000 ? 1'000'000 + (tick - 1'000) * 2 : 1'002'000 + (tick - 2'000) * 4;
}
TickSample scripted_sample() { return TickSample{true_ns(g_now), g_now}; }

class FedConverter : public ::testing::Test {
 protected:
  void SetUp() override {
    init_tick_source();
    if (!g_ticks_are_tsc) GTEST_SKIP() << "ticks are nanoseconds here: nothing to convert";
  }
};

TEST_F(FedConverter, ATickAfterTheLatestSampleIsInterpolatedNotGuessed) {
  TickConverter converter(&scripted_sample);
  converter.add_sample({true_ns(1'000), 1'000});
  converter.add_sample({true_ns(2'000), 2'000});  // the cycle's sample
  // A record made after it, drained at tick 3'500: the converter samples.
  g_now = 3'500;
  const uint64_t early = converter.to_ns(2'500);
  EXPECT_EQ(early, true_ns(2'500)) << "extrapolating at the old rate would say " << 1'003'000;
  // Cycles later: the same tick, and the moment right after it.
  converter.add_sample({true_ns(5'000), 5'000});
  converter.add_sample({true_ns(7'000), 7'000});
  EXPECT_EQ(converter.to_ns(2'500), early) << "the same tick moved between cycles";
  EXPECT_GE(converter.to_ns(2'501), early);
  EXPECT_EQ(converter.to_ns(1'500), true_ns(1'500));
}

TEST_F(FedConverter, MonotonicAndStableOverManyCyclesConvertedOutOfOrder) {
  TickConverter converter(&scripted_sample);
  converter.add_sample({true_ns(1'000), 1'000});
  std::vector<std::pair<uint64_t, uint64_t>> answers;  // (tick, ns) as first given
  uint64_t tick = 1'000;
  for (int cycle = 0; cycle < 3000; ++cycle) {  // wraps the history
    tick += 1'000;
    converter.add_sample({true_ns(tick), tick});  // the cycle starts
    g_now = tick + 999;                           // records of this cycle, drained by then
    for (uint64_t t : {tick + 300, tick - 700, tick + 10, tick - 999, tick + 999})
      answers.emplace_back(t, converter.to_ns(t));
  }
  std::sort(answers.begin(), answers.end());
  for (size_t i = 1; i < answers.size(); ++i)
    EXPECT_LE(answers[i - 1].second, answers[i].second) << "ticks " << answers[i - 1].first << " and " << answers[i].first;
  // Within the retained history, asking again gives the first answer.
  for (size_t i = answers.size() - 400; i < answers.size(); ++i)
    EXPECT_EQ(converter.to_ns(answers[i].first), answers[i].second) << answers[i].first;
  EXPECT_EQ(converter.retained_samples(), TickConverter::kHistory);
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
