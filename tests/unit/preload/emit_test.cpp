// The hook interface in-process: emit/commit through the thread's buffer,
// records with a tail, correlation ids, and a profiler thread that records
// on purpose. One runtime per test process (it is process-wide state).
#include <gtest/gtest.h>

#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "preload/process/lifecycle.h"
#include "preload/record/emit.h"
#include "preload/writer/writer.h"
#include "tests/unit/preload/support/process_runner.h"
#include "tests/unit/preload/support/trace_contents.h"

namespace proflaunch {
namespace {

using format::ApiCallRecord;

TEST(CorrelationIds, AreUniqueAcrossThreads) {
  constexpr int kThreads = 4, kPerThread = 100000;
  std::vector<std::vector<uint64_t>> ids(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&ids, t] {
      for (int i = 0; i < kPerThread; ++i) ids[t].push_back(next_correlation_id());
    });
  for (auto& thread : threads) thread.join();
  std::set<uint64_t> all;
  for (const auto& list : ids) {
    for (size_t i = 1; i < list.size(); ++i) ASSERT_EQ(list[i], list[i - 1] + 1);
    all.insert(list.begin(), list.end());
  }
  EXPECT_EQ(all.size(), size_t{kThreads} * kPerThread);
  EXPECT_EQ(all.count(0), 0u);
}

TEST(Emit, RecordsReachThePartInOrder) {
  testing::TempDir dir;
  Config config;
  std::strcpy(config.parts_dir, dir.path().c_str());
  config.buffer_bytes_per_thread = kMinBufferBytes;
  config.flush_interval_ms = 20;
  ASSERT_TRUE(runtime::start(config));
  ASSERT_TRUE(define_api(9, "test_api", format::ApiDomain::kRuntime, format::Vendor::kNvidia));

  // Three times the ring: the writer must keep draining while we emit.
  constexpr uint64_t kRecords = 3 * kMinBufferBytes / sizeof(ApiCallRecord);
  uint64_t emitted = 0;
  for (uint64_t i = 0; i < kRecords; ++i) {
    auto* record = emit<ApiCallRecord>();
    if (record == nullptr) {
      writer_flush_and_wait(FlushGoal::kFlush, 5000);  // full: let the writer catch up, retry
      record = emit<ApiCallRecord>();
    }
    ASSERT_NE(record, nullptr);
    EXPECT_EQ(record->reserved, 0u);  // handed out zeroed
    record->span.correlation_id = i;
    record->span.api = 9;
    commit();
    ++emitted;
  }

  // A profiler thread (a timing backend, say) may record on purpose.
  std::thread backend([] {
    mark_profiler_thread();
    if (auto* record = emit<ApiCallRecord>()) {
      record->span.correlation_id = 777777777;
      commit();
    }
  });
  backend.join();

  runtime::finish();
  std::string error;
  const auto trace = testing::load_trace(testing::list_files(dir.path(), ".part"), &error);
  ASSERT_TRUE(trace.all_clean()) << trace.problems();
  ASSERT_EQ(trace.sections.size(), 1u);
  const auto& section = trace.sections.begin()->second;
  ASSERT_EQ(section.apis.count(9), 1u);
  std::vector<uint64_t> values;
  bool backend_seen = false;
  for (const auto& call : section.calls) {
    if (call.value() == 777777777) {
      backend_seen = true;
      EXPECT_NE(call.tid, section.calls.front().tid);
      continue;
    }
    values.push_back(call.value());
  }
  EXPECT_TRUE(backend_seen);
  ASSERT_EQ(values.size(), emitted);
  for (uint64_t i = 0; i < values.size(); ++i) ASSERT_EQ(values[i], i);
  ASSERT_TRUE(section.end.has_value());
  EXPECT_EQ(section.end->records_dropped, section.lost_count());
}

}  // namespace
}  // namespace proflaunch
