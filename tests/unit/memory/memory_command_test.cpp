// `proftrace memory` as a command: the terminal report's sentences, the
// JSON and CSV outputs carrying the same numbers, a self-contained HTML page,
// the memory counters of `proftrace convert`, and errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/unit/memory/memory_scenario.h"
#include "tests/unit/tools/json_value.h"

namespace proflaunch::testing {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

CommandOutput run_memory(tools::MemoryCommand command) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  CommandOutput result;
  result.exit_code = tools::run_memory(command, out, err);
  for (auto [file, text] : {std::pair{out, &result.out}, std::pair{err, &result.err}}) {
    std::fflush(file);
    std::rewind(file);
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text->append(buffer, n);
    std::fclose(file);
  }
  return result;
}

// 100 MiB and 400 MiB live, then a 2 GiB cudaMalloc fails; 100 MiB is never freed.
std::string oom_trace() {
  MemoryScenario s;
  s.alloc(1 * kSecond, 0xA0000, 100 * kMiB);
  s.alloc(2 * kSecond, 0xB0000, 400 * kMiB);
  s.alloc(3 * kSecond + 300'000'000, 0, 2048 * kMiB, kMainTid, 2);
  s.free(4 * kSecond, 0xB0000);
  s.end(5 * kSecond);
  return write_trace(s.builder(), "oom.trace");
}

TEST(MemoryCommand, TheReportStatesPeakFailureAndLeaks) {
  tools::MemoryCommand command;
  command.inputs = {oom_trace()};
  const CommandOutput result = run_memory(command);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("peak allocated 500.0 MiB at 2.000 s"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("out of memory at 3.300 s on device 0 (pid 4242, cudaMalloc, thread 4242)"
                            ": requested 2.0 GiB with 500.0 MiB allocated in 2 blocks"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("largest live blocks: 400.0 MiB (cudaMalloc, 1.3 s old), 100.0 MiB (cudaMalloc, 2.3 s old)"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("never freed by exit: 1 blocks, 100.0 MiB"), std::string::npos) << result.out;
}

TEST(MemoryCommand, JsonAndCsvCarryTheSameNumbers) {
  tools::MemoryCommand command;
  command.inputs = {oom_trace()};
  command.json = temp_path("memory.json");
  command.csv_directory = temp_path("csv");
  const CommandOutput result = run_memory(command);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "") << "no report unless --report";

  std::string error;
  const auto document = parse_json(read_file(command.json), &error);
  ASSERT_TRUE(document) << error;
  const JsonValue& space = (*document)["spaces"].items.at(0);
  EXPECT_EQ(space["peak_allocated"]["bytes"].as_uint(), 500 * kMiB);
  EXPECT_EQ(space["peak_allocated"]["time_ns"].as_uint(), 2 * kSecond);
  EXPECT_EQ(space["live_at_peak"].items.size(), 2u);
  const JsonValue& failure = (*document)["failures"].items.at(0);
  EXPECT_EQ(failure["requested_bytes"].as_uint(), 2048 * kMiB);
  EXPECT_EQ(failure["result_name"].str(), "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_EQ(failure["state"]["allocated_bytes"].as_uint(), 500 * kMiB);
  EXPECT_EQ((*document)["leaks"].items.size(), 1u);

  const std::string spaces = read_file(command.csv_directory + "/spaces.csv");
  EXPECT_NE(spaces.find("," + std::to_string(500 * kMiB) + "," + std::to_string(2 * kSecond) + ","),
            std::string::npos)
      << spaces;
  const std::string live = read_file(command.csv_directory + "/live_at_peak.csv");
  EXPECT_EQ(std::count(live.begin(), live.end(), '\n'), 3) << live;  // header + 2
  const std::string failures = read_file(command.csv_directory + "/failures.csv");
  EXPECT_NE(failures.find("CUDA_ERROR_OUT_OF_MEMORY," + std::to_string(2048 * kMiB)), std::string::npos) << failures;
  const std::string timeline = read_file(command.csv_directory + "/timeline.csv");
  EXPECT_NE(timeline.find("," + std::to_string(500 * kMiB) + ","), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(command.csv_directory + "/leaks.csv"));
}

TEST(MemoryCommand, TheHtmlPageIsSelfContainedAndEmbedsTheReport) {
  tools::MemoryCommand command;
  command.inputs = {oom_trace()};
  command.html = temp_path("memory.html");
  ASSERT_EQ(run_memory(command).exit_code, 0);
  const std::string page = read_file(command.html);
  // Nothing to fetch: no external script, style, font or image.
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(std::regex_search(page, std::regex(R"((src|href)\s*=\s*["']?(https?:)?//)")), false);
  EXPECT_EQ(page.find("@import"), std::string::npos);
  EXPECT_EQ(page.find("fetch("), std::string::npos);
  // The embedded report is the JSON document, intact.
  const std::string open = "<script type=\"application/json\" id=\"memory-data\">";
  const size_t begin = page.find(open);
  ASSERT_NE(begin, std::string::npos);
  const size_t end = page.find("</script>", begin);
  std::string error;
  const auto data = parse_json(page.substr(begin + open.size(), end - begin - open.size()), &error);
  ASSERT_TRUE(data) << error;
  EXPECT_EQ((*data)["spaces"].items.at(0)["peak_allocated"]["bytes"].as_uint(), 500 * kMiB);
}

// A name that would end the embedded <script> element if copied raw.
TEST(MemoryCommand, TextFromTheTraceCannotBreakOutOfTheEmbeddedData) {
  MemoryScenario s;
  s.builder().thread(kSection, kWorkerTid, "</script><script>alert(1)</script>");
  s.alloc(kSecond, 0xA000, kMiB, kWorkerTid);
  tools::MemoryCommand command;
  command.inputs = {write_trace(s.builder(), "script.trace")};
  command.html = temp_path("memory.html");
  ASSERT_EQ(run_memory(command).exit_code, 0);
  const std::string page = read_file(command.html);
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
}

TEST(MemoryCommand, AMissingInputIsAnErrorThatNamesIt) {
  tools::MemoryCommand command;
  command.inputs = {temp_path("missing.trace")};
  const CommandOutput result = run_memory(command);
  EXPECT_EQ(result.exit_code, tools::kExitError);
  EXPECT_NE(result.err.find("missing.trace"), std::string::npos) << result.err;
}

TEST(MemoryCommand, AnUnwritableOutputIsAnError) {
  tools::MemoryCommand command;
  command.inputs = {oom_trace()};
  command.json = temp_path("no-such-dir") + "/memory.json";
  const CommandOutput result = run_memory(command);
  EXPECT_EQ(result.exit_code, tools::kExitError);
  EXPECT_NE(result.err.find("memory.json"), std::string::npos) << result.err;
}

// `proftrace convert`: counter tracks named per device, values in bytes at
// every change, and the file passes the Perfetto JSON checker.
TEST(MemoryCounters, ConvertWritesAllocatedAndReservedPerDeviceAndPinnedHostMemory) {
  MemoryScenario s;
  s.alloc(1 * kSecond, 0xA0000, 100 * kMiB);
  s.alloc(2 * kSecond, 0xB0000, 400 * kMiB);
  s.free(3 * kSecond, 0xA0000);
  s.record(kMainTid, memory_record(AllocationKind::kPinnedHost, MemoryAction::kAcquire, kStartNs + 4 * kSecond,
                                   0x5000, 32 * kMiB));
  s.end(5 * kSecond);
  const ConvertedTrace converted = convert_trace(s.builder());
  ASSERT_EQ(converted.exit_code, 0) << converted.err;
  std::vector<std::pair<std::string, uint64_t>> allocated, pinned;
  for (const JsonValue* event : converted.with_phase('C')) {
    EXPECT_EQ((*event)["pid"].as_uint(), kPid);
    const std::string name = (*event)["name"].str();
    if (name == "GPU 0 memory") {
      allocated.push_back({(*event)["ts"].str(), (*event)["args"]["allocated"].as_uint()});
      EXPECT_EQ((*event)["args"]["reserved"].as_uint(), (*event)["args"]["allocated"].as_uint());
    } else if (name == "Host memory") {
      pinned.push_back({(*event)["ts"].str(), (*event)["args"]["pinned"].as_uint()});
    } else {
      ADD_FAILURE() << "unexpected counter " << name;
    }
  }
  const std::vector<std::pair<std::string, uint64_t>> expected_allocated = {
      {"1000000.000", 100 * kMiB}, {"2000000.000", 500 * kMiB}, {"3000000.000", 400 * kMiB}};
  EXPECT_EQ(allocated, expected_allocated);
  EXPECT_EQ(pinned, (std::vector<std::pair<std::string, uint64_t>>{{"4000000.000", 32 * kMiB}}));
  std::string output;
  EXPECT_EQ(run_checker(converted.json_path, &output), 0) << output;
}

// Each memory call is also a slice on its thread, a failed one with its result.
TEST(MemoryCounters, ConvertShowsEveryMemoryCallOnItsThread) {
  MemoryScenario s;
  s.alloc(1 * kSecond, 0xA0000, 100 * kMiB);
  s.alloc(2 * kSecond, 0, 4096 * kMiB, kWorkerTid, /*CUDA_ERROR_OUT_OF_MEMORY*/ 2);
  s.free(3 * kSecond, 0xA0000);
  const ConvertedTrace converted = convert_trace(s.builder());
  ASSERT_EQ(converted.exit_code, 0) << converted.err;
  std::vector<std::string> seen;
  for (const JsonValue* slice : converted.with_phase('X')) {
    const JsonValue& args = (*slice)["args"];
    std::string text = (*slice)["name"].str() + " tid " + std::to_string((*slice)["tid"].as_uint()) + " " +
                       args["action"].str();
    if (args.has("bytes")) text += " " + std::to_string(args["bytes"].as_uint());
    if (args.has("result")) text += " result " + std::to_string(args["result"].as_int());
    seen.push_back(text);
  }
  const std::vector<std::string> expected = {
      "cudaMalloc tid 4242 acquire " + std::to_string(100 * kMiB),
      "cudaMalloc tid 4243 acquire " + std::to_string(4096 * kMiB) + " result 2",
      "cudaFree tid 4242 release",
  };
  EXPECT_EQ(seen, expected);
}

}  // namespace
}  // namespace proflaunch::testing

namespace proflaunch::testing {
namespace {

// `proftrace dump` and `info` know the memory records.
TEST(MemoryRecords, DumpPrintsEveryFieldAndInfoCountsThem) {
  MemoryScenario s;
  auto pool_free = memory_record(AllocationKind::kPool, MemoryAction::kRelease, kStartNs + kSecond, 0xA0000, 0);
  pool_free.stream = format::kStreamPerThread;
  pool_free.handle = 0x9001;
  s.record(kMainTid, pool_free);
  format::MemoryInfoRecord info{};
  info.device = 1;
  info.span.end_ns = kStartNs + 2 * kSecond;
  info.free_bytes = 123 * kMiB;
  info.total_bytes = 456 * kMiB;
  s.builder().event(s.section(), kMainTid, info);
  const std::string trace = write_trace(s.builder(), "dump.trace");
  const CommandOutput dump = run_dump_on({trace});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_NE(dump.out.find("MemoryOperation "), std::string::npos) << dump.out;
  EXPECT_NE(dump.out.find("kind=\"stream-ordered\" action=\"release\" address=0xa0000 bytes=0 "
                          "stream=per-thread default handle=0x9001"),
            std::string::npos)
      << dump.out;
  EXPECT_NE(dump.out.find("pool_reserved_bytes=unknown"), std::string::npos) << dump.out;
  EXPECT_NE(dump.out.find("device=1 free_bytes=" + std::to_string(123 * kMiB) + " total_bytes=" +
                          std::to_string(456 * kMiB)),
            std::string::npos)
      << dump.out;
  const CommandOutput info_out = run_info_on({trace});
  EXPECT_NE(info_out.out.find("MemoryOperation             1"), std::string::npos) << info_out.out;
  EXPECT_NE(info_out.out.find("MemoryInfo                  1"), std::string::npos) << info_out.out;
}

}  // namespace
}  // namespace proflaunch::testing

namespace proflaunch::testing {
namespace {

TEST(MemoryCommand, ATraceWithoutAllocationsSaysSo) {
  MemoryScenario s;  // definitions only
  tools::MemoryCommand command;
  command.inputs = {write_trace(s.builder(), "empty.trace")};
  command.html = temp_path("empty.html");
  command.report = true;
  const CommandOutput result = run_memory(command);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("No allocation was recorded"), std::string::npos) << result.out;
  std::ifstream page(command.html);
  EXPECT_TRUE(page.good());
}

}  // namespace
}  // namespace proflaunch::testing
