// attach_stacks() in-process with the shim's core recording to a temporary
// directory: a stack is defined once however often and from however many
// threads it is taken, two call sites are two stacks, every capture emits a
// CallStack with the caller's correlation id right after the caller's record,
// and the module map precedes the stacks. One runtime per process: one test.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "formats/reader.h"
#include "preload/process/lifecycle.h"
#include "preload/record/emit.h"
#include "preload/stacks/stacks.h"
#include "tests/unit/preload/support/process_runner.h"

extern "C" void capture_site_a(void (*capture)(void*), void* context);
extern "C" void capture_site_b(void (*capture)(void*), void* context);

namespace proflaunch {
namespace {

using format::RecordKind;

// An event record and its stack, the way a hook does it.
void record_with_stack(void* correlation) {
  const uint64_t id = *static_cast<uint64_t*>(correlation);
  if (auto* record = emit<format::ApiCallRecord>()) {
    record->span.correlation_id = id;
    commit();
    stacks::attach_stacks(id, format::StackPoint::kSync);
  }
}

struct Collected {
  std::vector<uint16_t> kinds;  // in file order, per section
  std::map<uint32_t, uint32_t> stack_of_call;  // ApiCall correlation -> native stack of the next CallStack
  uint64_t native_defs = 0, module_defs = 0, call_stacks = 0, mismatched = 0;
  uint64_t first_module = UINT64_MAX, first_stack = UINT64_MAX;
};

class Collector : public format::RecordVisitor {
 public:
  void on_record(const format::RecordView& record) override {
    const uint64_t index = out.kinds.size();
    out.kinds.push_back(record.kind);
    switch (record.record_kind()) {
      case RecordKind::kModuleDef:
        ++out.module_defs;
        out.first_module = std::min(out.first_module, index);
        break;
      case RecordKind::kNativeStackDef:
        ++out.native_defs;
        out.first_stack = std::min(out.first_stack, index);
        break;
      case RecordKind::kApiCall:
        last_call_[record.tid] = record.as<format::ApiCallRecord>().span.correlation_id;
        break;
      case RecordKind::kCallStack: {
        ++out.call_stacks;
        const auto stack = record.as<format::CallStackRecord>();
        if (last_call_[record.tid] != stack.correlation_id) ++out.mismatched;
        out.stack_of_call[static_cast<uint32_t>(stack.correlation_id)] = stack.native_stack;
        break;
      }
      default: break;
    }
  }
  Collected out;

 private:
  std::map<uint32_t, uint64_t> last_call_;
};

TEST(StackCapture, DefinesEachStackOnceAndFollowsEveryEvent) {
  testing::TempDir dir;
  Config config;
  std::strcpy(config.parts_dir, dir.path().c_str());
  config.buffer_bytes_per_thread = kDefaultBufferBytes;
  config.flush_interval_ms = 20;
  config.stack_points = kStacksAll;
  config.stack_depth = kDefaultStackDepth;
  ASSERT_TRUE(runtime::start(config));
  stacks::start_stacks(config);
  ASSERT_TRUE(stacks::stacks_enabled(format::StackPoint::kSync));

  // Site A 100 times, site B 100 times on this thread; then four threads
  // racing through site A (their stacks are alike: same thread entry).
  std::vector<uint64_t> site_a_ids, site_b_ids;
  uint64_t correlation = 1;
  for (int i = 0; i < 100; ++i) {
    site_a_ids.push_back(correlation);
    capture_site_a(record_with_stack, &correlation);
    ++correlation;
    site_b_ids.push_back(correlation);
    capture_site_b(record_with_stack, &correlation);
    ++correlation;
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      for (uint64_t i = 0; i < 500; ++i) {
        uint64_t id = 1'000'000 * (t + 1) + i;
        capture_site_a(record_with_stack, &id);
      }
    });
  for (auto& thread : threads) thread.join();
  runtime::finish();

  Collector collector;
  for (const std::string& part : testing::list_files(dir.path(), ".part")) {
    std::string error;
    auto reader = format::TraceReader::open_file(part, &error);
    ASSERT_TRUE(reader) << error;
    reader->read(collector);
  }
  const Collected& c = collector.out;
  EXPECT_EQ(c.call_stacks, 200u + 4 * 500u);
  EXPECT_EQ(c.mismatched, 0u) << "a CallStack did not follow its own event";
  // Site A and site B on the main thread, site A on the four threads (one
  // stack: their frames are the same).
  EXPECT_EQ(c.native_defs, 3u);
  EXPECT_GT(c.module_defs, 0u);
  EXPECT_LT(c.first_module, c.first_stack) << "modules must come before the stacks in them";
  const uint32_t a = c.stack_of_call.at(static_cast<uint32_t>(site_a_ids.front()));
  const uint32_t b = c.stack_of_call.at(static_cast<uint32_t>(site_b_ids.front()));
  EXPECT_NE(a, 0u);
  EXPECT_NE(b, 0u);
  EXPECT_NE(a, b);
  for (uint64_t id : site_a_ids) EXPECT_EQ(c.stack_of_call.at(static_cast<uint32_t>(id)), a);
  for (uint64_t id : site_b_ids) EXPECT_EQ(c.stack_of_call.at(static_cast<uint32_t>(id)), b);
}

}  // namespace
}  // namespace proflaunch
