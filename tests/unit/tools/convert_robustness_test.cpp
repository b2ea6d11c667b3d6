// Whatever the records contain - pids of 0 or above the Linux range, strings
// that are not UTF-8, durations that run backwards, GPU work out of order,
// ids that repeat - convert must produce a trace the importer accepts, and
// info and dump must not fail. Seeded, so every run checks the same traces.
#include <gtest/gtest.h>

#include <random>

#include "tests/unit/tools/tool_fixture.h"
#include "tests/unit/tools/trace_scenarios.h"

namespace proflaunch::testing {
namespace {

using namespace proflaunch::format;

class RandomTrace {
 public:
  explicit RandomTrace(uint32_t seed) : random_(seed) {}

  TraceBuilder build() {
    TraceBuilder trace(TraceBuilder::Options{.chunk_content_bytes = 512 + pick(4096)});
    const uint64_t sections = 1 + pick(3);
    for (uint64_t s = 1; s <= sections; ++s) define_section(trace, s);
    for (int i = 0; i < 300; ++i) add_event(trace, 1 + pick(sections));
    if (pick(2) == 0) trace.section_end(1, any_time(), pick(1000), pick(10));
    return trace;
  }

 private:
  uint64_t pick(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(random_); }
  uint64_t any64() { return random_() | static_cast<uint64_t>(random_()) << 32; }
  uint64_t any_time() { return pick(8) == 0 ? any64() : 1'000'000 + pick(5'000'000); }

  std::string any_text() {
    std::string text;
    const size_t length = pick(40);
    for (size_t i = 0; i < length; ++i) text.push_back(static_cast<char>(pick(256)));
    if (pick(3) == 0) text = "_Z" + text;  // looks mangled, is not
    return text;
  }

  void define_section(TraceBuilder& trace, uint64_t section) {
    ProcessSpec spec;
    const uint32_t pids[] = {0, 1, 4321, (1u << 22) + 5, 0xFFFFFFFFu, static_cast<uint32_t>(pick(100000))};
    spec.pid = pids[pick(6)];
    spec.host = any_text();
    spec.argv = {any_text(), any_text()};
    spec.rank = static_cast<int32_t>(pick(5)) - 1;
    spec.monotonic_ns = any_time();
    if (pick(5) != 0) trace.process(section, spec);
    for (uint16_t api = 1; api < 6; ++api)
      trace.api(section, any_text(), static_cast<ApiDomain>(pick(6)), Vendor::kNvidia, api);
    for (uint64_t f = 0; f < 4; ++f) trace.function(section, f, pick(2) ? "_Z6kernelPfi" : any_text(), any_time());
    trace.thread(section, static_cast<uint32_t>(pick(4)), any_text());
    DeviceSpec device;
    device.ordinal = static_cast<int32_t>(pick(3)) - 1;
    device.name = any_text();
    device.uuid[0] = static_cast<uint8_t>(pick(3));
    trace.device(section, device);
  }

  ApiSpan span(uint64_t section, uint32_t tid) {
    // Calls on one thread follow each other (nesting is the shim's job and
    // holds by construction); everything else is arbitrary.
    uint64_t& clock = thread_clock_[section * 1000 + tid];
    if (clock == 0) clock = any_time();
    const uint64_t begin = clock + pick(100);
    const uint64_t end = pick(20) == 0 ? begin - pick(50) : begin + pick(1000);
    clock = std::max(begin, end) + 1;
    return ApiSpan{begin, end, 1 + pick(12), static_cast<int32_t>(pick(3)) - 1,
                   static_cast<uint16_t>(pick(8)), static_cast<uint16_t>(pick(8))};
  }

  uint64_t any_stream() {
    const uint64_t streams[] = {0, kStreamLegacy, kStreamPerThread, 0xABC, any64()};
    return streams[pick(5)];
  }

  void add_event(TraceBuilder& trace, uint64_t section) {
    const uint32_t tid = static_cast<uint32_t>(pick(4));
    const int32_t device = static_cast<int32_t>(pick(3)) - 1;
    switch (pick(9)) {
      case 0: {
        KernelLaunchRecord r{};
        r.span = span(section, tid);
        r.device = device;
        r.function = pick(6);
        r.stream = any_stream();
        r.grid = {static_cast<uint32_t>(any64()), 1, 1};
        trace.event(section, tid, r);
        break;
      }
      case 1: {
        MemoryCopyRecord r{};
        r.span = span(section, tid);
        r.device = device;
        r.bytes = any64();
        r.stream = any_stream();
        r.direction = static_cast<uint8_t>(pick(8));
        r.src_kind = static_cast<uint8_t>(pick(8));
        trace.event(section, tid, r);
        break;
      }
      case 2: {
        MemorySetRecord r{};
        r.span = span(section, tid);
        r.bytes = pick(1 << 20);
        r.stream = any_stream();
        trace.event(section, tid, r);
        break;
      }
      case 3: case 4: {
        GpuActivityRecord r{};
        r.correlation_id = 1 + pick(12);
        r.device = device;
        r.start_ns = any_time();
        r.end_ns = pick(10) == 0 ? r.start_ns - pick(100) : r.start_ns + pick(100000);
        r.stream = any_stream();
        r.kind = static_cast<uint8_t>(pick(5));
        trace.event(section, tid, r);
        break;
      }
      case 5: {
        SynchronizeRecord r{};
        r.span = span(section, tid);
        r.target = static_cast<uint8_t>(pick(7));
        r.stream = any_stream();
        trace.event(section, tid, r);
        break;
      }
      case 6: {
        ObjectLifecycleRecord r{};
        r.span = span(section, tid);
        r.handle = any_stream();
        r.id = pick(3);
        r.object = static_cast<uint8_t>(pick(7));
        r.action = static_cast<uint8_t>(pick(4));
        trace.event(section, tid, r);
        break;
      }
      case 7: {
        LostRecord r{};
        r.reason = static_cast<uint32_t>(pick(5));
        r.first_ns = any_time();
        r.last_ns = any_time();
        r.count = any64();
        trace.event(section, tid, r);
        break;
      }
      default: {
        ApiCallRecord r{};
        r.span = span(section, tid);
        trace.event(section, tid, r);
        break;
      }
    }
  }

  std::mt19937 random_;
  std::map<uint64_t, uint64_t> thread_clock_;
};

TEST(ConvertRobustness, ArbitraryRecordContentsStillGiveAValidTrace) {
  std::string outputs;  // checked in one checker run: Python starts once
  for (uint32_t seed = 1; seed <= 25; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    TraceBuilder trace = RandomTrace(seed).build();
    const std::string path = write_trace(trace, "random" + std::to_string(seed) + ".trace");
    tools::ConvertCommand command;
    command.join_window = 1 + seed % 16;
    command.output = temp_path("random" + std::to_string(seed) + ".json");
    const ConvertedTrace out = convert_files({path}, command);
    ASSERT_EQ(out.exit_code, 0) << out.err;
    outputs += " " + out.json_path;
    EXPECT_EQ(run_info_on({path}).exit_code, 0);
    EXPECT_EQ(run_dump_on({path}).exit_code, 0);
  }
  std::string checker_output;
  EXPECT_EQ(run_checker(outputs, &checker_output, /*gpu_invariants=*/false), 0) << checker_output;
}

}  // namespace
}  // namespace proflaunch::testing
