// The writer turns hook ticks into CLOCK_MONOTONIC ns: the result must agree
// with the clock read at the same moment, and stay monotonic across cycles.
#include "preload/tick_converter.h"

#include <gtest/gtest.h>

#include <algorithm>
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

// Hand-fed samples whose rates differ (2 ns per tick, then 3): the answers
// must not depend on the cycle in which a tick is converted.
class FedConverter : public ::testing::Test {
 protected:
  void SetUp() override {
    init_tick_source();
    if (!g_ticks_are_tsc) GTEST_SKIP() << "ticks are nanoseconds here: nothing to convert";
  }
};

TEST_F(FedConverter, ATickGetsTheSameAnswerInEveryLaterCycle) {
  TickConverter converter;
  converter.add_sample({1'000'000, 1'000});
  converter.add_sample({1'002'000, 2'000});  // 2 ns per tick
  // Cycle 1 drains a record made after its sample: extrapolated.
  const uint64_t early = converter.to_ns(2'500);
  EXPECT_EQ(early, 1'003'000u);
  // Cycle 2's sample shows a different rate over the segment holding 2'500.
  converter.add_sample({1'007'000, 3'500});
  // A LOST record about the moment right after the record, drained now.
  const uint64_t later = converter.to_ns(2'501);
  EXPECT_GE(later, early) << "a later tick came out earlier";
  EXPECT_EQ(converter.to_ns(2'500), early) << "the same tick moved between cycles";
  // Interpolation resumes from the kept extrapolation to the new sample.
  EXPECT_EQ(converter.to_ns(3'500), 1'007'000u);
  EXPECT_EQ(converter.to_ns(3'000), 1'005'000u);
  // Older ticks keep their segments.
  EXPECT_EQ(converter.to_ns(1'500), 1'001'000u);
}

TEST_F(FedConverter, MonotonicOverManyCyclesWhateverTheOrderOfConversion) {
  TickConverter converter;
  converter.add_sample({1'000'000, 1'000});
  std::vector<std::pair<uint64_t, uint64_t>> answers;  // (tick, ns) as first given
  uint64_t ticks = 1'000, ns = 1'000'000;
  for (int cycle = 0; cycle < 3000; ++cycle) {  // wraps the history
    ticks += 1'000;
    ns += 900 + (cycle * 37) % 250;  // the rate wanders
    converter.add_sample({ns, ticks});
    // Records of this cycle, some made after its sample, converted out of order.
    for (uint64_t t : {ticks + 300, ticks - 700, ticks + 10, ticks - 999})
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
