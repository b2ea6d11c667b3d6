#include "tests/unit/tools/tool_fixture.h"
#include "tools/proftrace/timeline/track_layout.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace proflaunch::testing {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string read_back(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, n);
  std::fclose(file);
  return text;
}

std::filesystem::path run_directory() {
  return std::filesystem::temp_directory_path() / ("proftrace_test_" + std::to_string(::getpid()));
}

// Removes this run's temporary files when the test program exits.
struct TemporaryFilesCleanup {
  ~TemporaryFilesCleanup() {
    std::error_code ignored;
    std::filesystem::remove_all(run_directory(), ignored);
  }
} cleanup_at_exit;

std::filesystem::path test_directory() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info != nullptr ? std::string(info->test_suite_name()) + "." + info->name() : "global";
  const auto dir = run_directory() / name;
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

std::string temp_path(const std::string& name) { return (test_directory() / name).string(); }

std::string write_trace(format::TraceBuilder& trace, const std::string& name) {
  const std::string path = temp_path(name);
  std::string error;
  EXPECT_TRUE(trace.write_file(path, &error)) << error;
  return path;
}

CommandOutput run_info_on(const std::vector<std::string>& files) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  CommandOutput result;
  result.exit_code = tools::run_info(tools::InfoCommand{files}, out, err);
  result.out = read_back(out);
  result.err = read_back(err);
  return result;
}

CommandOutput run_dump_on(const std::vector<std::string>& files, bool definitions_only) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  CommandOutput result;
  result.exit_code = tools::run_dump(tools::DumpCommand{files, definitions_only}, out, err);
  result.out = read_back(out);
  result.err = read_back(err);
  return result;
}

CommandOutput run_stats_on(tools::StatsCommand command) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  CommandOutput result;
  result.exit_code = tools::run_stats(command, out, err);
  result.out = read_back(out);
  result.err = read_back(err);
  return result;
}

ConvertedTrace convert_files(const std::vector<std::string>& files, tools::ConvertCommand command) {
  ConvertedTrace result;
  command.inputs = files;
  if (command.output.empty()) command.output = temp_path("out.json");
  command.quiet = true;
  std::FILE* err = std::tmpfile();
  result.exit_code = tools::run_convert(command, err);
  result.err = read_back(err);
  result.json_path = command.output;
  if (result.exit_code != tools::kExitOk && result.exit_code != tools::kExitDamagedInput) return result;
  result.json_text = read_file(command.output);
  std::string error;
  auto parsed = parse_json(result.json_text, &error);
  EXPECT_TRUE(parsed.has_value()) << "proftrace wrote invalid JSON: " << error;
  if (!parsed) return result;
  result.document = std::move(*parsed);
  for (const JsonValue& event : result.document["traceEvents"].items) result.events.push_back(&event);
  return result;
}

ConvertedTrace convert_trace(format::TraceBuilder& trace, tools::ConvertCommand command) {
  return convert_files({write_trace(trace, "in.trace")}, std::move(command));
}

std::vector<const JsonValue*> ConvertedTrace::with_phase(char phase, const std::string& category) const {
  std::vector<const JsonValue*> found;
  for (const JsonValue* event : events) {
    if ((*event)["ph"].str() != std::string(1, phase)) continue;
    if (!category.empty() && (*event)["cat"].str().rfind(category, 0) != 0) continue;
    found.push_back(event);
  }
  return found;
}

std::vector<uint64_t> dim3_of(const JsonValue& value) {
  std::vector<uint64_t> numbers;
  if (value.type != JsonValue::Type::kArray) return numbers;
  for (const JsonValue& item : value.items) numbers.push_back(item.as_uint());
  return numbers;
}

std::vector<const JsonValue*> ConvertedTrace::gpu_slices() const {
  std::vector<const JsonValue*> found;
  for (const JsonValue* event : with_phase('X'))
    if ((*event)["pid"].as_uint() >= tools::timeline::kGpuPidBase) found.push_back(event);
  return found;
}

const JsonValue* ConvertedTrace::slice_named(const std::string& name) const {
  for (const JsonValue* event : events)
    if ((*event)["ph"].str() == "X" && (*event)["name"].str() == name) return event;
  return nullptr;
}

std::string ConvertedTrace::process_name(uint64_t pid) const {
  for (const JsonValue* event : events)
    if ((*event)["ph"].str() == "M" && (*event)["name"].str() == "process_name" &&
        (*event)["pid"].as_uint() == pid)
      return (*event)["args"]["name"].str();
  return "";
}

std::string ConvertedTrace::thread_name(uint64_t pid, uint64_t tid) const {
  for (const JsonValue* event : events)
    if ((*event)["ph"].str() == "M" && (*event)["name"].str() == "thread_name" &&
        (*event)["pid"].as_uint() == pid && (*event)["tid"].as_uint() == tid)
      return (*event)["args"]["name"].str();
  return "";
}

CommandOutput run_shell(const std::string& command) {
  const std::string out_path = temp_path("shell.out");
  const std::string err_path = temp_path("shell.err");
  const int status = std::system((command + " >" + out_path + " 2>" + err_path).c_str());
  CommandOutput result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_file(out_path);
  result.err = read_file(err_path);
  return result;
}

int run_checker(const std::string& json_path, std::string* output, bool gpu_invariants) {
  const CommandOutput result = run_shell(std::string(PROFLAUNCH_PYTHON3) + " " + PERFETTO_JSON_CHECKER + " " +
                                         json_path + (gpu_invariants ? "" : " --no-gpu-invariants"));
  *output = result.out + result.err;
  return result.exit_code;
}

}  // namespace proflaunch::testing
