// Limits: a flood that overflows the rings is counted exactly; a full disk
// stops the output but not the program; a profiler that cannot work says so
// once and gets out of the way.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "tests/unit/preload/support/shim_run.h"

namespace proflaunch::testing {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

std::string without_proflaunch_lines(const std::string& text, size_t* removed) {
  std::string kept;
  *removed = 0;
  for (const std::string& line : lines_of(text)) {
    if (line.rfind("proflaunch: ", 0) == 0) {
      ++*removed;
      continue;
    }
    kept += line + "\n";
  }
  return kept;
}

TEST(ShimLimits, AFloodIsCountedExactly) {
  constexpr uint64_t kThreads = 4, kPerThread = 250000;
  TempDir parts;
  RunOptions options =
      traced_probe(parts.path(), {"flood", std::to_string(kThreads), std::to_string(kPerThread)});
  options.set_env.emplace_back("PROFLAUNCH_BUFFER_SIZE", "64K");
  const ProcessResult result = run_process(options);
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.err, "");

  std::string error;
  const TraceContents trace = load_parts(parts.path(), &error);
  ASSERT_TRUE(trace.all_clean()) << trace.problems();
  ASSERT_EQ(trace.sections.size(), 1u);
  const SectionContents& section = trace.sections.begin()->second;
  const uint64_t written = section.calls.size();
  const uint64_t dropped = section.lost_count();

  EXPECT_GT(dropped, 0u) << "a 64K ring should overflow under this flood";
  EXPECT_EQ(written + dropped, kThreads * kPerThread) << "emitted = written + dropped";
  ASSERT_TRUE(section.end.has_value());
  EXPECT_EQ(section.end->records_written, written);
  EXPECT_EQ(section.end->records_dropped, dropped);

  // Per thread: what was written plus what its LOST records count is exactly
  // what it emitted, and each LOST sits in time between its neighbours.
  std::map<uint32_t, uint64_t> emitted_by_tid;
  for (const ProbeCall& call : section.calls) ++emitted_by_tid[call.tid];
  for (const ThreadLost& lost : section.lost) {
    EXPECT_EQ(lost.record.reason, static_cast<uint32_t>(format::LostReason::kBufferFull));
    EXPECT_LE(lost.record.first_ns, lost.record.last_ns);
    EXPECT_GT(lost.record.count, 0u);
    emitted_by_tid[lost.tid] += lost.record.count;
  }
  ASSERT_EQ(emitted_by_tid.size(), kThreads);
  for (const auto& [tid, emitted] : emitted_by_tid) EXPECT_EQ(emitted, kPerThread) << tid;

  // The gap is where it happened: after the thread's last record before the
  // drops ended, before its first record after them began.
  std::map<uint32_t, std::vector<const ProbeCall*>> calls_by_tid;  // in file order
  for (const ProbeCall& call : section.calls) calls_by_tid[call.tid].push_back(&call);
  for (const ThreadLost& lost : section.lost) {
    const auto& calls = calls_by_tid[lost.tid];
    const auto after = std::lower_bound(
        calls.begin(), calls.end(), lost.order,
        [](const ProbeCall* call, uint64_t order) { return call->order < order; });
    if (after != calls.begin()) {
      EXPECT_LE((*(after - 1))->record.span.end_ns, lost.record.first_ns);
    }
    if (after != calls.end()) {
      EXPECT_GE((*after)->record.span.begin_ns, lost.record.last_ns);
    }
  }
}

TEST(ShimLimits, AFullDiskStopsTheTraceNotTheProgram) {
  TempDir parts;
  const std::vector<std::string> args = {"output", "400000", "0"};
  const ProcessResult plain = run_process(untraced_probe(args));
  RunOptions options = traced_probe(parts.path(), args);
  // RLIMIT_FSIZE: the part hits EFBIG after a few ~16 KiB chunks, long before
  // the fast producer could overflow its ring (delta-coded chunks are small).
  options.file_size_limit_bytes = 64 * 1024;
  const ProcessResult traced = run_process(options);

  ASSERT_TRUE(plain.exited_with(0)) << plain.describe();
  EXPECT_EQ(traced.status, plain.status) << traced.describe();  // no SIGXFSZ
  EXPECT_EQ(traced.out, plain.out);
  size_t warnings = 0;
  EXPECT_EQ(without_proflaunch_lines(traced.err, &warnings), plain.err);
  EXPECT_NE(traced.err.find("File too large"), std::string::npos);

  // The part was cut back to its last complete chunk and reads without damage.
  const auto files = list_files(parts.path(), ".part");
  ASSERT_EQ(files.size(), 1u);
  std::string error;
  const TraceContents trace = load_trace(files, &error);
  EXPECT_TRUE(trace.all_clean()) << trace.problems();
  ASSERT_EQ(trace.sections.size(), 1u);
  const SectionContents& section = trace.sections.begin()->second;
  EXPECT_GT(section.calls.size(), 0u);
  EXPECT_LT(section.calls.size(), 400000u);
  for (size_t i = 0; i < section.calls.size(); ++i) ASSERT_EQ(section.calls[i].value(), i);
  // The last attempt at exit: where the cut left room under the limit, a
  // Lost record with every event not written (and the section's end, when
  // that fits too); where it did not (the definitions still owed may not
  // fit), one more line on stderr with the count. Nothing is lost without
  // being counted. Either way, the failed write itself is the first warning.
  const bool loss_in_trace = section.calls.size() + section.lost_count() == 400000u;
  if (section.end.has_value()) {
    EXPECT_TRUE(loss_in_trace) << section.calls.size() << " + " << section.lost_count();
    EXPECT_EQ(section.end->records_dropped, section.lost_count());
    EXPECT_EQ(warnings, 1u) << traced.err.substr(0, 2000);
  } else if (loss_in_trace) {
    EXPECT_GT(section.lost_count(), 0u);
    EXPECT_EQ(warnings, 1u) << traced.err.substr(0, 2000);
  } else {
    EXPECT_NE(traced.err.find("events after the failed write are not in the trace"), std::string::npos)
        << traced.err.substr(0, 2000);
    EXPECT_EQ(warnings, 2u) << traced.err.substr(0, 2000);
  }
}

TEST(ShimLimits, AProgramThatClosesAllDescriptorsKeepsItsTrace) {
  // The shim holds no descriptor between writes, so closing "everything but
  // stdio" neither breaks the trace nor makes us write into the program's files.
  TempDir parts;
  const ProcessResult result = run_process(traced_probe(parts.path(), {"close-fds", "500"}));
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, "closed\n");
  EXPECT_EQ(result.err, "");
  std::string error;
  const TraceContents trace = load_parts(parts.path(), &error);
  ASSERT_TRUE(trace.all_clean()) << trace.problems();
  ASSERT_EQ(trace.sections.size(), 1u);
  const SectionContents& section = trace.sections.begin()->second;
  EXPECT_EQ(section.calls.size(), 1000u);
  ASSERT_TRUE(section.end.has_value());
  EXPECT_EQ(section.end->records_written, 1000u);
}

TEST(ShimLimits, AnUnwritablePartsDirectoryMeansOneWarningAndAPassThrough) {
  const std::vector<std::string> args = {"output", "5000", "4"};
  const ProcessResult plain = run_process(untraced_probe(args));
  const ProcessResult traced = run_process(traced_probe("/nonexistent/proflaunch-parts", args));
  EXPECT_EQ(traced.status, plain.status);
  EXPECT_EQ(traced.out, plain.out);
  size_t warnings = 0;
  EXPECT_EQ(without_proflaunch_lines(traced.err, &warnings), plain.err);
  EXPECT_EQ(warnings, 1u);
  EXPECT_NE(traced.err.find("cannot write to /nonexistent/proflaunch-parts"), std::string::npos);
}

TEST(ShimLimits, ABadSettingWarnsOnceAndRecordsWithTheDefault) {
  TempDir parts;
  RunOptions options = traced_probe(parts.path(), {"emit", "1000"});
  options.set_env.emplace_back("PROFLAUNCH_BUFFER_SIZE", "banana");
  const ProcessResult result = run_process(options);
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.err, "proflaunch: PROFLAUNCH_BUFFER_SIZE=banana: not a size (e.g. 8M); using 8M\n");
  std::string error;
  EXPECT_EQ(load_parts(parts.path(), &error).total_calls(), 1000u);
}

}  // namespace
}  // namespace proflaunch::testing
