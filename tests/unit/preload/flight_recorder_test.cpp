// The flight recorder's bookkeeping (preload/capture/flight_recorder.h) with
// hand-built chunks, the triggers it reads from records, and the parsing of
// its options (preload/capture/capture_spec.h).
#include "preload/writer/flight_recorder.h"

#include <gtest/gtest.h>

#include <cstring>

#include "preload/capture/capture_spec.h"

namespace proflaunch::capture {
namespace {

using format::CaptureTrigger;
using format::MemoryAction;
using format::MemoryOperationRecord;

constexpr uint64_t kMs = 1000000;

KeptChunk chunk_of(size_t bytes, uint64_t first_ns, uint64_t last_ns, uint64_t records = 10) {
  KeptChunk c;
  c.encoded.assign(bytes, 0xAB);
  c.first_ns = first_ns;
  c.last_ns = last_ns;
  c.records = records;
  return c;
}

MemoryOperationRecord memory_op(MemoryAction action, uint64_t address, uint64_t bytes, int32_t result = 0) {
  MemoryOperationRecord r{};
  r.header = format::header_for<MemoryOperationRecord>();
  r.action = static_cast<uint8_t>(action);
  r.kind = static_cast<uint8_t>(format::AllocationKind::kDevice);
  r.address = address;
  r.bytes = bytes;
  r.span.result = result;
  return r;
}

TEST(FlightRecorder, NeverKeepsMoreThanTheBound) {
  FlightRecorder ring;
  ring.configure(3600 * 1000 * kMs, 4 << 20);
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(ring.keep(chunk_of(700 << 10, i * kMs, i * kMs + 1), i * kMs + 1));
    EXPECT_LE(ring.stats().kept_bytes, uint64_t{4} << 20);
  }
  EXPECT_EQ(ring.chunks().size(), 5u);  // 5 * 700 KiB <= 4 MiB < 6 * 700 KiB
  EXPECT_EQ(ring.chunks().front().first_ns, 45 * kMs);  // the newest ones
  EXPECT_LE(ring.stats().peak_bytes, uint64_t{4} << 20);
  EXPECT_EQ(ring.stats().evicted_chunks, 45u);
  EXPECT_EQ(ring.stats().evicted_records, 450u);
}

TEST(FlightRecorder, LetsGoOfWhatIsOlderThanTheDuration) {
  FlightRecorder ring;
  ring.configure(300 * kMs, uint64_t{1} << 30);
  for (int i = 0; i < 10; ++i) ring.keep(chunk_of(100, i * 100 * kMs, i * 100 * kMs + 90 * kMs), i * 100 * kMs + 90 * kMs);
  // Now 990 ms: chunks sealed at 690, 790, 890, 990 ms are within 300 ms.
  ASSERT_EQ(ring.chunks().size(), 4u);
  EXPECT_EQ(ring.window_begin_ns(990 * kMs), 600 * kMs);
  // Time passes with nothing new: they go too.
  ring.expire(1250 * kMs);
  EXPECT_EQ(ring.chunks().size(), 1u);
  ring.expire(5000 * kMs);
  EXPECT_TRUE(ring.chunks().empty());
  EXPECT_EQ(ring.window_begin_ns(5000 * kMs), 5000 * kMs);
  EXPECT_EQ(ring.stats().kept_bytes, 0u);
}

TEST(FlightRecorder, FollowsTheBlocksAliveBeforeTheOldestKeptChunk) {
  FlightRecorder ring;
  ring.configure(100 * kMs, uint64_t{1} << 30);
  KeptChunk first = chunk_of(100, 0, 10 * kMs);
  first.memory = {memory_op(MemoryAction::kAcquire, 0x1000, 64), memory_op(MemoryAction::kAcquire, 0x2000, 128),
                  memory_op(MemoryAction::kAcquire, 0x3000, 1, /*result=*/2)};  // failed: not a block
  KeptChunk second = chunk_of(100, 20 * kMs, 30 * kMs);
  second.memory = {memory_op(MemoryAction::kRelease, 0x1000, 0)};
  ring.keep(std::move(first), 10 * kMs);
  ring.keep(std::move(second), 30 * kMs);
  EXPECT_TRUE(ring.blocks_before().empty());  // both chunks kept: nothing before them

  ring.expire(115 * kMs);  // the first goes: its two blocks are now "before"
  ASSERT_EQ(ring.chunks().size(), 1u);
  auto before = ring.blocks_before();
  ASSERT_EQ(before.size(), 2u);
  ring.expire(135 * kMs);  // the second goes: 0x1000 was freed in it
  before = ring.blocks_before();
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].address, 0x2000u);
  EXPECT_EQ(before[0].bytes, 128u);
}

TEST(FlightRecorder, ADumpLetsGoOfWhatItWroteAndKeepsItsBlocks) {
  FlightRecorder ring;
  ring.configure(3600 * 1000 * kMs, uint64_t{1} << 30);
  KeptChunk c = chunk_of(100, 0, kMs, 7);
  c.memory = {memory_op(MemoryAction::kAcquire, 0x1000, 64)};
  ring.keep(std::move(c), kMs);
  ring.dumped();
  EXPECT_TRUE(ring.chunks().empty());
  EXPECT_EQ(ring.stats().dumps, 1u);
  EXPECT_EQ(ring.stats().dumped_records, 7u);
  EXPECT_EQ(ring.stats().kept_bytes, 0u);
  EXPECT_EQ(ring.blocks_before().size(), 1u);  // carried into the next dump
}

template <class Record>
CaptureTrigger trigger_for(const Record& r) {
  return trigger_of_record(&r, sizeof r);
}

TEST(FlightRecorder, TriggersAreOutOfMemoryOnAnAllocationAndStickyErrors) {
  EXPECT_EQ(trigger_for(memory_op(MemoryAction::kAcquire, 0, 1ull << 50, 2)), CaptureTrigger::kOutOfMemory);
  EXPECT_EQ(trigger_for(memory_op(MemoryAction::kAcquire, 0x1000, 64, 0)), CaptureTrigger{});
  // A release that fails with 2 (invalid value on a free) is no out-of-memory.
  EXPECT_EQ(trigger_for(memory_op(MemoryAction::kRelease, 0x1000, 0, 2)), CaptureTrigger{});
  for (int32_t code : {700, 710, 716, 719, 214})
    EXPECT_EQ(trigger_for(memory_op(MemoryAction::kAcquire, 0, 64, code)), CaptureTrigger::kStickyError) << code;

  format::KernelLaunchRecord launch{};
  launch.header = format::header_for<format::KernelLaunchRecord>();
  launch.span.result = 700;
  EXPECT_EQ(trigger_for(launch), CaptureTrigger::kStickyError);
  launch.span.result = 2;  // a launch's 2 is not an allocation
  EXPECT_EQ(trigger_for(launch), CaptureTrigger{});
  launch.span.result = 720;  // too many blocks for a cooperative launch: not sticky
  EXPECT_EQ(trigger_for(launch), CaptureTrigger{});
  // A record without an ApiSpan never triggers.
  format::CaptureWindowRecord window{};
  window.header = format::header_for<format::CaptureWindowRecord>();
  EXPECT_EQ(trigger_for(window), CaptureTrigger{});
}

TEST(RingOptions, ParseWithDefaultsAndRefuseWhatCannotWork) {
  CaptureSpec spec;
  char error[400];
  CaptureOptions o;
  o.ring = "30s";
  ASSERT_TRUE(parse_capture_options(o, spec, error, sizeof error)) << error;
  EXPECT_EQ(spec.mode, CaptureMode::kAlways);
  EXPECT_EQ(spec.ring_ns, 30ull * 1000 * kMs);
  EXPECT_EQ(spec.ring_bytes, kDefaultRingBytes);
  EXPECT_FALSE(spec.ring_dump_at_exit);

  o.ring_size = "64M";
  o.ring_dump_at_exit = true;
  ASSERT_TRUE(parse_capture_options(o, spec, error, sizeof error)) << error;
  EXPECT_EQ(spec.ring_bytes, uint64_t{64} << 20);
  EXPECT_TRUE(spec.ring_dump_at_exit);

  auto refused = [&](CaptureOptions bad, const char* option) {
    CaptureSpec s;
    EXPECT_FALSE(parse_capture_options(bad, s, error, sizeof error)) << option;
    EXPECT_NE(std::strstr(error, option), nullptr) << error;
  };
  refused(CaptureOptions{.ring = "0"}, "--ring");
  refused(CaptureOptions{.ring = "-1s"}, "--ring");
  refused(CaptureOptions{.ring = "1s", .ring_size = "1M"}, "--ring-size");
  refused(CaptureOptions{.ring = "1s", .ring_size = "lots"}, "--ring-size");
  refused(CaptureOptions{.ring_size = "64M"}, "--ring-size");
  refused(CaptureOptions{.ring_dump_at_exit = true}, "--ring-dump-at-exit");
  refused(CaptureOptions{.capture_range = "cudaProfilerApi", .ring = "1s"}, "--ring");
  refused(CaptureOptions{.duration = "1s", .ring = "1s"}, "--ring");
  refused(CaptureOptions{.idle = true, .ring = "1s"}, "--ring");
}

}  // namespace
}  // namespace proflaunch::capture
