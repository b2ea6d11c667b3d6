// The configuration parser: defaults, accepted spellings, and that every bad
// value yields exactly one warning and a usable default.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <utility>
#include <string>
#include <vector>

#include "preload/config.h"

namespace proflaunch {
namespace {

struct Parsed {
  Config config;
  std::vector<std::string> warnings;  // variable names
};

Parsed parse(const std::map<std::string, std::string>& env) {
  Parsed parsed;
  parse_config(
      parsed.config,
      [](const char* name, void* context) -> const char* {
        const auto& map = *static_cast<const std::map<std::string, std::string>*>(context);
        auto found = map.find(name);
        return found == map.end() ? nullptr : found->second.c_str();
      },
      const_cast<std::map<std::string, std::string>*>(&env),
      [](const char* variable, const char*, const char*, void* context) {
        static_cast<std::vector<std::string>*>(context)->push_back(variable);
      },
      &parsed.warnings);
  return parsed;
}

TEST(Config, DefaultsWhenNothingIsSet) {
  const Parsed parsed = parse({});
  EXPECT_TRUE(parsed.warnings.empty());
  EXPECT_EQ(parsed.config.parts_dir[0], '\0');  // not recording without the launcher
  EXPECT_EQ(parsed.config.buffer_bytes_per_thread, kDefaultBufferBytes);
  EXPECT_EQ(parsed.config.flush_interval_ms, kDefaultFlushIntervalMs);
  EXPECT_LE(parsed.config.flush_interval_ms, 200u);
  EXPECT_EQ(parsed.config.gpu_timing, GpuTiming::kAuto);
  EXPECT_EQ(parsed.config.trace_domains, static_cast<uint32_t>(kTraceAll));
  EXPECT_FALSE(parsed.config.verbose);
  EXPECT_EQ(parsed.config.exec_parent_pid, 0u);
  EXPECT_EQ(parsed.config.rank, -1);
}

TEST(Config, ReadsEveryVariable) {
  const Parsed parsed = parse({{"PROFLAUNCH_PARTS_DIR", "/tmp/out.parts"},
                               {"PROFLAUNCH_BUFFER_SIZE", "1M"},
                               {"PROFLAUNCH_FLUSH_INTERVAL_MS", "50"},
                               {"PROFLAUNCH_GPU_TIMING", "none"},
                               {"PROFLAUNCH_TRACE", "cuda,nvtx"},
                               {"PROFLAUNCH_VERBOSE", "1"},
                               {"PROFLAUNCH_EXEC_PARENT", "1234:00000000deadbeef"},
                               {"RANK", "3"},
                               {"LOCAL_RANK", "1"},
                               {"WORLD_SIZE", "8"}});
  EXPECT_TRUE(parsed.warnings.empty());
  EXPECT_STREQ(parsed.config.parts_dir, "/tmp/out.parts");
  EXPECT_EQ(parsed.config.buffer_bytes_per_thread, size_t{1} << 20);
  EXPECT_EQ(parsed.config.flush_interval_ms, 50u);
  EXPECT_EQ(parsed.config.gpu_timing, GpuTiming::kNone);
  EXPECT_EQ(parsed.config.trace_domains, static_cast<uint32_t>(kTraceCuda | kTraceNvtx));
  EXPECT_TRUE(parsed.config.verbose);
  EXPECT_EQ(parsed.config.exec_parent_pid, 1234u);
  EXPECT_EQ(parsed.config.exec_parent_section, 0xdeadbeefu);
  EXPECT_EQ(parsed.config.rank, 3);
  EXPECT_EQ(parsed.config.local_rank, 1);
  EXPECT_EQ(parsed.config.world_size, 8);
}

TEST(Config, BufferSizeIsRoundedUpToAPowerOfTwo) {
  EXPECT_EQ(parse({{"PROFLAUNCH_BUFFER_SIZE", "100000"}}).config.buffer_bytes_per_thread,
            size_t{131072});
  EXPECT_EQ(parse({{"PROFLAUNCH_BUFFER_SIZE", "3MiB"}}).config.buffer_bytes_per_thread,
            size_t{4} << 20);
}

TEST(Config, GpuTimingNamesEveryBackend) {
  for (const auto& [text, expected] : {std::pair{"auto", GpuTiming::kAuto}, std::pair{"cupti", GpuTiming::kCupti},
                                       std::pair{"events", GpuTiming::kEvents}, std::pair{"none", GpuTiming::kNone}}) {
    GpuTiming timing = GpuTiming::kNone;
    ASSERT_TRUE(parse_gpu_timing(text, timing)) << text;
    EXPECT_EQ(timing, expected) << text;
  }
  GpuTiming timing = GpuTiming::kNone;
  EXPECT_FALSE(parse_gpu_timing("CUPTI", timing));
}

TEST(Config, EachBadValueWarnsOnceAndKeepsTheDefault) {
  const Parsed parsed = parse({{"PROFLAUNCH_PARTS_DIR", "relative/dir"},
                               {"PROFLAUNCH_BUFFER_SIZE", "banana"},
                               {"PROFLAUNCH_FLUSH_INTERVAL_MS", "-5"},
                               {"PROFLAUNCH_GPU_TIMING", "cupti-please"},
                               {"PROFLAUNCH_TRACE", "cuda,disk"},
                               {"PROFLAUNCH_VERBOSE", "loud"},
                               {"PROFLAUNCH_EXEC_PARENT", "garbage"}});
  std::vector<std::string> warned = parsed.warnings;
  std::sort(warned.begin(), warned.end());
  EXPECT_EQ(warned, (std::vector<std::string>{"PROFLAUNCH_BUFFER_SIZE", "PROFLAUNCH_EXEC_PARENT",
                                              "PROFLAUNCH_FLUSH_INTERVAL_MS", "PROFLAUNCH_GPU_TIMING",
                                              "PROFLAUNCH_PARTS_DIR", "PROFLAUNCH_TRACE",
                                              "PROFLAUNCH_VERBOSE"}));
  EXPECT_EQ(parsed.config.parts_dir[0], '\0');
  EXPECT_EQ(parsed.config.buffer_bytes_per_thread, kDefaultBufferBytes);
  EXPECT_EQ(parsed.config.flush_interval_ms, kDefaultFlushIntervalMs);
  EXPECT_EQ(parsed.config.gpu_timing, GpuTiming::kAuto);
  EXPECT_EQ(parsed.config.trace_domains, static_cast<uint32_t>(kTraceAll));
  EXPECT_FALSE(parsed.config.verbose);
  EXPECT_EQ(parsed.config.exec_parent_pid, 0u);
}

TEST(Config, OutOfRangeValuesAreClampedOrRefused) {
  const Parsed slow = parse({{"PROFLAUNCH_FLUSH_INTERVAL_MS", "5000"}});
  EXPECT_EQ(slow.warnings.size(), 1u);
  EXPECT_EQ(slow.config.flush_interval_ms, kMaxFlushIntervalMs);  // the SIGKILL promise holds

  const Parsed tiny = parse({{"PROFLAUNCH_BUFFER_SIZE", "4K"}});
  EXPECT_EQ(tiny.warnings.size(), 1u);
  EXPECT_EQ(tiny.config.buffer_bytes_per_thread, kDefaultBufferBytes);

  const Parsed huge = parse({{"PROFLAUNCH_BUFFER_SIZE", "64G"}});
  EXPECT_EQ(huge.warnings.size(), 1u);
  EXPECT_EQ(huge.config.buffer_bytes_per_thread, kDefaultBufferBytes);
}

TEST(Config, RankFallsBackToMpiAndSlurmVariables) {
  EXPECT_EQ(parse({{"OMPI_COMM_WORLD_RANK", "5"}}).config.rank, 5);
  EXPECT_EQ(parse({{"SLURM_PROCID", "7"}}).config.rank, 7);
  EXPECT_EQ(parse({{"RANK", "x"}, {"SLURM_PROCID", "2"}}).config.rank, 2);
}

TEST(Config, TraceDomainParser) {
  uint32_t domains = 0;
  EXPECT_TRUE(parse_trace_domains("all", domains));
  EXPECT_EQ(domains, static_cast<uint32_t>(kTraceAll));
  EXPECT_TRUE(parse_trace_domains("memory", domains));
  EXPECT_EQ(domains, static_cast<uint32_t>(kTraceMemory));
  EXPECT_FALSE(parse_trace_domains("", domains));
  EXPECT_FALSE(parse_trace_domains("cuda,", domains));
  EXPECT_FALSE(parse_trace_domains("CUDA", domains));
}

TEST(Config, ByteSizeParser) {
  size_t bytes = 0;
  EXPECT_TRUE(parse_byte_size("512k", bytes));
  EXPECT_EQ(bytes, size_t{512} << 10);
  EXPECT_TRUE(parse_byte_size("2G", bytes));
  EXPECT_EQ(bytes, size_t{2} << 30);
  EXPECT_FALSE(parse_byte_size("12X", bytes));
  EXPECT_FALSE(parse_byte_size("-1", bytes));
  EXPECT_FALSE(parse_byte_size("", bytes));
}

}  // namespace
TEST(TsanOptions, DieAfterForkOffIsReadAsTSanReadsIt) {
  EXPECT_FALSE(tsan_allows_threads_after_fork(nullptr));
  EXPECT_FALSE(tsan_allows_threads_after_fork(""));
  EXPECT_FALSE(tsan_allows_threads_after_fork("halt_on_error=1"));
  EXPECT_TRUE(tsan_allows_threads_after_fork("die_after_fork=0"));
  EXPECT_TRUE(tsan_allows_threads_after_fork("halt_on_error=1:die_after_fork=false"));
  EXPECT_TRUE(tsan_allows_threads_after_fork("halt_on_error=1 die_after_fork=0,report_bugs=1"));
  EXPECT_FALSE(tsan_allows_threads_after_fork("die_after_fork=1"));
  EXPECT_FALSE(tsan_allows_threads_after_fork("die_after_fork=0:die_after_fork=1")) << "the last one wins";
  EXPECT_TRUE(tsan_allows_threads_after_fork("die_after_fork=1:die_after_fork=0"));
  EXPECT_FALSE(tsan_allows_threads_after_fork("die_after_fork=00"));
}

}  // namespace proflaunch
