// Every record kind written with TraceBuilder comes back from the reader
// byte for byte, with the right section, chunk kind and thread.
#include <gtest/gtest.h>

#include <random>

#include "formats/record_kinds.h"
#include "formats/trace_builder.h"
#include "tests/unit/formats/collecting_visitor.h"

namespace proflaunch::format {
namespace {

using testing::CollectingVisitor;
using testing::open_bytes;

// Fills every byte of a record with seeded noise, so that a field read from
// the wrong offset or a record truncated in transit shows up as a mismatch.
template <typename T>
T noisy_record(std::mt19937& random) {
  T record;
  auto* bytes = reinterpret_cast<uint8_t*>(&record);
  for (size_t i = 0; i < sizeof record; ++i) bytes[i] = static_cast<uint8_t>(random());
  record.header = header_for<T>();
  return record;
}

template <typename T>
std::vector<uint8_t> as_bytes(const T& record) {
  const auto* p = reinterpret_cast<const uint8_t*>(&record);
  return std::vector<uint8_t>(p, p + sizeof record);
}

TEST(RoundTrip, EveryRecordKindComesBackByteForByte) {
  std::mt19937 random(42);
  TraceBuilder trace;
  const uint64_t section = 0xABCDEF0123456789ull;
  std::vector<std::vector<uint8_t>> expected_definitions;
  std::vector<std::vector<uint8_t>> expected_events;

  auto define = [&](auto record) {
    trace.define(section, record);
    expected_definitions.push_back(as_bytes(record));
  };
  define(noisy_record<ProcessInfoRecord>(random));
  define(noisy_record<ApiDefRecord>(random));
  define(noisy_record<FunctionDefRecord>(random));
  define(noisy_record<ThreadInfoRecord>(random));
  define(noisy_record<DeviceInfoRecord>(random));
  define(noisy_record<SectionEndRecord>(random));
  define(noisy_record<GpuMetricDefRecord>(random));
  define(noisy_record<NativeStackDefRecord>(random));
  define(noisy_record<PythonStackDefRecord>(random));
  define(noisy_record<ModuleDefRecord>(random));
  define(noisy_record<SymbolDefRecord>(random));
  define(noisy_record<NvtxDomainDefRecord>(random));
  define(noisy_record<NvtxNameDefRecord>(random));

  const uint32_t tid = 4242;
  auto event = [&](auto record) {
    trace.event(section, tid, record);
    expected_events.push_back(as_bytes(record));
  };
  event(noisy_record<LostRecord>(random));
  event(noisy_record<ApiCallRecord>(random));
  event(noisy_record<KernelLaunchRecord>(random));
  event(noisy_record<MemoryCopyRecord>(random));
  event(noisy_record<MemorySetRecord>(random));
  event(noisy_record<SynchronizeRecord>(random));
  event(noisy_record<ObjectLifecycleRecord>(random));
  event(noisy_record<GpuActivityRecord>(random));
  event(noisy_record<ApiCountRecord>(random));
  event(noisy_record<GpuTimingInfoRecord>(random));
  event(noisy_record<UnattributedGpuWorkRecord>(random));
  event(noisy_record<CaptureWindowRecord>(random));
  event(noisy_record<CallStackRecord>(random));
  event(noisy_record<CpuSampleRecord>(random));
  event(noisy_record<BlockingCallRecord>(random));
  event(noisy_record<CpuSamplingInfoRecord>(random));
  event(noisy_record<MemoryOperationRecord>(random));
  event(noisy_record<MemoryInfoRecord>(random));
  event(noisy_record<CollectiveCommRecord>(random));
  event(noisy_record<CollectiveRecord>(random));
  event(noisy_record<CollectiveGroupRecord>(random));
  event(noisy_record<StreamCaptureRecord>(random));
  event(noisy_record<CapturedNodeRecord>(random));
  event(noisy_record<GraphNodeRecord>(random));
  event(noisy_record<GraphExecRecord>(random));
  event(noisy_record<GraphLaunchRecord>(random));
  event(noisy_record<NvtxEventRecord>(random));
  event(noisy_record<GpuMetricSampleRecord>(random));
  const uint32_t string_id = trace.string(section, "void kernel<float>(float*)");

  std::string error;
  auto reader = open_bytes(trace.bytes(), &error);
  ASSERT_TRUE(reader) << error;
  CollectingVisitor visitor;
  const ReadReport report = reader->read(visitor);
  EXPECT_TRUE(report.clean()) << summarize(report);
  EXPECT_EQ(report.chunks_ok, 2u);

  std::vector<std::vector<uint8_t>> got_definitions;
  std::vector<std::vector<uint8_t>> got_events;
  bool saw_string = false;
  bool saw_batch = false;
  for (const auto& record : visitor.records) {
    EXPECT_EQ(record.section_id, section);
    if (record.kind == static_cast<uint16_t>(RecordKind::kStringDef)) {
      const auto def = record.as<StringDefRecord>();
      EXPECT_EQ(def.id, string_id);
      EXPECT_EQ(std::string(record.bytes.begin() + sizeof def, record.bytes.end()),
                "void kernel<float>(float*)");
      saw_string = true;
    } else if (record.kind == static_cast<uint16_t>(RecordKind::kThreadBatch)) {
      EXPECT_EQ(record.as<ThreadBatchRecord>().tid, tid);
      saw_batch = true;
    } else if (record.chunk_kind == ChunkKind::kDefinitions) {
      EXPECT_EQ(record.tid, 0u);
      got_definitions.push_back(record.bytes);
    } else {
      EXPECT_EQ(record.tid, tid);
      got_events.push_back(record.bytes);
    }
  }
  EXPECT_TRUE(saw_string);
  EXPECT_TRUE(saw_batch);
  EXPECT_EQ(got_definitions, expected_definitions);
  EXPECT_EQ(got_events, expected_events);

  // Every known kind appeared (StringDef and ThreadBatch checked above).
  for (RecordKind kind : kKnownRecordKinds) {
    const bool present = std::any_of(visitor.records.begin(), visitor.records.end(),
                                     [&](const auto& r) { return r.kind == static_cast<uint16_t>(kind); });
    EXPECT_TRUE(present) << *record_kind_name(static_cast<uint16_t>(kind));
  }
}

TEST(RoundTrip, InterleavedSectionsAndThreadsKeepTheirContext) {
  TraceBuilder trace(TraceBuilder::Options{.chunk_content_bytes = 256});
  const uint64_t a = 1, b = 2;
  trace.process(a, ProcessSpec{.pid = 10});
  trace.process(b, ProcessSpec{.pid = 20});
  for (uint64_t i = 0; i < 60; ++i) {
    GpuActivityRecord record{};
    record.correlation_id = i;
    const uint64_t section = (i % 3 == 0) ? b : a;
    const uint32_t tid = static_cast<uint32_t>(section * 100 + i % 2);
    trace.event(section, tid, record);
  }
  std::string error;
  auto reader = open_bytes(trace.bytes(), &error);
  ASSERT_TRUE(reader) << error;
  ASSERT_GT(trace.chunks().size(), 4u) << "test needs several chunks per section";
  CollectingVisitor visitor;
  EXPECT_TRUE(reader->read(visitor).clean());

  size_t activities = 0;
  for (const auto& record : visitor.records) {
    if (record.kind != static_cast<uint16_t>(RecordKind::kGpuActivity)) continue;
    const uint64_t i = record.as<GpuActivityRecord>().correlation_id;
    const uint64_t section = (i % 3 == 0) ? b : a;
    EXPECT_EQ(record.section_id, section) << i;
    EXPECT_EQ(record.tid, section * 100 + i % 2) << i;
    ++activities;
  }
  EXPECT_EQ(activities, 60u);
}

TEST(RoundTrip, BuilderHelpersWriteTheDefinitionsTheyDescribe) {
  TraceBuilder trace;
  const uint64_t s = 7;
  trace.process(s, ProcessSpec{.pid = 1234, .ppid = 1, .host = "node7",
                               .argv = {"python", "train.py"}, .rank = 3});
  const uint16_t api = trace.api(s, "cuLaunchKernel", ApiDomain::kDriver);
  trace.function(s, 0xF00D, "_Z3fooPf", 55);
  trace.thread(s, 1235, "worker");
  trace.section_end(s, 999, 10, 2);

  std::string error;
  auto reader = open_bytes(trace.bytes(), &error);
  ASSERT_TRUE(reader) << error;
  CollectingVisitor visitor;
  reader->read(visitor);

  std::map<uint32_t, std::string> strings;
  for (const auto& r : visitor.records)
    if (r.kind == static_cast<uint16_t>(RecordKind::kStringDef))
      strings[r.as<StringDefRecord>().id] =
          std::string(r.bytes.begin() + sizeof(StringDefRecord), r.bytes.end());

  ASSERT_FALSE(visitor.records.empty());
  ASSERT_EQ(visitor.records.front().kind, static_cast<uint16_t>(RecordKind::kProcessInfo))
      << "ProcessInfo must be the first record of the section";
  const auto info = visitor.records.front().as<ProcessInfoRecord>();
  EXPECT_EQ(info.pid, 1234u);
  EXPECT_EQ(info.rank, 3);
  EXPECT_EQ(strings[info.host_string], "node7");
  EXPECT_EQ(strings[info.command_line_string], std::string("python\0train.py", 15));
  EXPECT_EQ(strings[info.executable_string], "python");

  bool saw_api = false, saw_function = false, saw_thread = false, saw_end = false;
  for (const auto& r : visitor.records) {
    switch (static_cast<RecordKind>(r.kind)) {
      case RecordKind::kApiDef:
        EXPECT_EQ(r.as<ApiDefRecord>().api, api);
        EXPECT_EQ(strings[r.as<ApiDefRecord>().name_string], "cuLaunchKernel");
        saw_api = true;
        break;
      case RecordKind::kFunctionDef:
        EXPECT_EQ(r.as<FunctionDefRecord>().handle, 0xF00Du);
        EXPECT_EQ(r.as<FunctionDefRecord>().since_ns, 55u);
        EXPECT_EQ(strings[r.as<FunctionDefRecord>().name_string], "_Z3fooPf");
        saw_function = true;
        break;
      case RecordKind::kThreadInfo:
        EXPECT_EQ(strings[r.as<ThreadInfoRecord>().name_string], "worker");
        saw_thread = true;
        break;
      case RecordKind::kSectionEnd:
        EXPECT_EQ(r.as<SectionEndRecord>().records_dropped, 2u);
        saw_end = true;
        break;
      default: break;
    }
  }
  EXPECT_TRUE(saw_api && saw_function && saw_thread && saw_end);
}

TEST(RoundTrip, StringsAreInternedPerSection) {
  TraceBuilder trace;
  const uint32_t first = trace.string(1, "same");
  EXPECT_EQ(trace.string(1, "same"), first);
  EXPECT_NE(trace.string(1, "other"), first);
  // Another section has its own id space.
  EXPECT_EQ(trace.string(2, "x"), 1u);
}

TEST(RoundTrip, ChunksAreCutAtTheConfiguredSize) {
  TraceBuilder trace(TraceBuilder::Options{.chunk_content_bytes = 1000});
  for (int i = 0; i < 100; ++i) trace.event(1, 1, GpuActivityRecord{});
  trace.flush();
  // 100 records plus one ThreadBatch per chunk, in chunks of <= 1000 bytes.
  constexpr size_t kPerChunk = (1000 - sizeof(ThreadBatchRecord)) / sizeof(GpuActivityRecord);
  EXPECT_EQ(trace.chunks().size(), (100 + kPerChunk - 1) / kPerChunk);
  for (const auto& chunk : trace.chunks()) EXPECT_LE(chunk.records * sizeof(GpuActivityRecord), 1000u + sizeof(GpuActivityRecord));
}

}  // namespace
}  // namespace proflaunch::format
