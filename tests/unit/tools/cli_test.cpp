// The proftrace executable: help, version, exit codes and messages for bad
// input. Runs the real binary, as a user would.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "formats/chunk_encoder.h"
#include "tests/unit/tools/tool_fixture.h"
#include "tests/unit/tools/trace_scenarios.h"

namespace proflaunch::testing {
namespace {

using namespace proflaunch::format;

CommandOutput proftrace(const std::string& arguments) {
  return run_shell(std::string(PROFTRACE_EXE) + " " + arguments);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string write_bytes(const std::string& name, const std::vector<uint8_t>& bytes) {
  const std::string path = temp_path(name);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!bytes.empty()) std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  return path;
}

TEST(Cli, VersionNamesToolAndFormat) {
  const CommandOutput result = proftrace("--version");
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_TRUE(contains(result.out, std::string("proftrace ") + PROFLAUNCH_VERSION)) << result.out;
  EXPECT_TRUE(contains(result.out, "trace format version 1")) << result.out;
}

TEST(Cli, EverySubcommandHasHelp) {
  for (const char* sub : {"convert", "info", "dump"}) {
    const CommandOutput result = proftrace(std::string(sub) + " --help");
    EXPECT_EQ(result.exit_code, 0) << sub;
    EXPECT_TRUE(contains(result.out, "files")) << sub << ": " << result.out;
  }
  EXPECT_TRUE(contains(proftrace("convert --help").out, "--join-window"));
  EXPECT_NE(proftrace("").exit_code, 0) << "a subcommand is required";
  EXPECT_NE(proftrace("convert").exit_code, 0) << "convert needs files and -o";
}

TEST(Cli, AnUnknownCompressionIsRefusedWithTheChoices) {
  TraceBuilder trace;
  add_process(trace, 1, 1, 0);
  const std::string input = write_bytes("compression.trace", trace.bytes());
  const std::string out = temp_path("compression.pftrace");
  std::remove(out.c_str());
  const CommandOutput result = proftrace("convert " + input + " -o " + out + " --compression gzip");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_TRUE(contains(result.err, "--compression")) << result.err;
  EXPECT_TRUE(contains(result.err, "deflate")) << result.err;
  EXPECT_NE(access(out.c_str(), F_OK), 0) << "nothing written";
  EXPECT_EQ(proftrace("convert " + input + " -o " + out + " --compression zstd").exit_code, 0);
}

TEST(Cli, BadInputsExitNonZeroWithAMessageNamingTheFile) {
  const std::string garbage = write_bytes("garbage.bin", std::vector<uint8_t>(5000, 0x42));
  const std::string empty = write_bytes("empty.trace", {});
  TraceBuilder trace;
  add_process(trace, 1, 1, 0);
  std::vector<uint8_t> bytes = trace.bytes();
  const std::string short_header =
      write_bytes("short.trace", std::vector<uint8_t>(bytes.begin(), bytes.begin() + 20));
  FileHeader header = make_file_header();
  header.format_version = 2;
  std::memcpy(bytes.data(), &header, sizeof header);
  const std::string newer = write_bytes("newer.trace", bytes);
  const std::string out = temp_path("out.json");

  struct Case {
    std::string file;
    std::string message;
  };
  const Case cases[] = {
      {garbage, "garbage.bin: not a proflaunch trace"},
      {empty, "empty.trace: the file is empty"},
      {short_header, "short.trace: truncated"},
      {newer, "newer.trace: written in trace format version 2, but this proftrace reads format version 1"},
      {temp_path("absent.trace"), "absent.trace: cannot open: No such file or directory"},
  };
  for (const Case& c : cases) {
    for (const std::string& sub : {"convert -o " + out, std::string("info"), std::string("dump")}) {
      const CommandOutput result = proftrace(sub + " " + c.file);
      EXPECT_EQ(result.exit_code, 1) << sub << " " << c.file;
      EXPECT_TRUE(contains(result.err, "proftrace: ")) << result.err;
      EXPECT_TRUE(contains(result.err, c.message)) << sub << ": " << result.err;
    }
  }
}

TEST(Cli, ConvertWritesValidJsonAndSaysWhatItWrote) {
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 1, 10, 1000);
  trace.event(p.section, 10, launch(p, 1, 2000, 3000, 0x1, kStreamLegacy));
  trace.event(p.section, 10, activity(1, 4000, 5000, kStreamLegacy, GpuActivityKind::kKernel));
  trace.section_end(p.section, 6000, 3, 0);
  const std::string input = write_trace(trace, "ok.trace");
  const std::string out = temp_path("ok.json");
  const CommandOutput result = proftrace("convert " + input + " -o " + out);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.err, "wrote " + out)) << result.err;
  EXPECT_TRUE(contains(result.err, "1 flows")) << result.err;
  std::string checker_output;
  EXPECT_EQ(run_checker(out, &checker_output), 0) << checker_output;

  const CommandOutput to_stdout = proftrace("convert -q " + input + " -o -");
  ASSERT_EQ(to_stdout.exit_code, 0) << to_stdout.err;
  std::string error;
  EXPECT_TRUE(parse_json(to_stdout.out, &error).has_value()) << error;
  EXPECT_TRUE(to_stdout.err.empty()) << "-q on a clean, complete trace: " << to_stdout.err;
}

}  // namespace
}  // namespace proflaunch::testing
