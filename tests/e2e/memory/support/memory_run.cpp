#include "tests/e2e/memory/support/memory_run.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "formats/reader.h"
#include "tests/perfetto/twin_check.h"

namespace proflaunch::e2e {

std::string build_path(const char* variable) { return testing::required_env(variable); }

RunOptions traced(const std::string& trace, const std::vector<std::string>& program,
                  const std::vector<std::string>& launcher_args,
                  const std::vector<std::pair<std::string, std::string>>& env) {
  RunOptions options;
  options.argv = {build_path("PROFLAUNCH_EXE"), "-q", "-o", trace};
  options.argv.insert(options.argv.end(), launcher_args.begin(), launcher_args.end());
  options.argv.push_back("--");
  options.argv.insert(options.argv.end(), program.begin(), program.end());
  options.unset_env = {"LD_PRELOAD", "PROFLAUNCH_LIBRARY", "PROFLAUNCH_PARTS_DIR", "PROFLAUNCH_TRACE",
                       "PROFLAUNCH_GPU_TIMING", "PROFLAUNCH_VERBOSE", "PROFLAUNCH_EXEC_PARENT"};
  // Never a real NVIDIA library: the simulated ones come first.
  options.set_env = {{"LD_LIBRARY_PATH", build_path("SIMGPU_LIBRARY_PATH")}, {"SIMGPU_DEVICE_MEMORY_MIB", "2048"}};
  options.set_env.insert(options.set_env.end(), env.begin(), env.end());
  options.timeout_ms = 30000;
  return options;
}

ProcessResult run_proftrace(const std::vector<std::string>& args) {
  RunOptions options;
  options.argv.push_back(build_path("PROFTRACE_EXE"));
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.timeout_ms = 30000;
  ProcessResult result = testing::run_process(options);
  if (result.exited_with(0)) {
    const std::string twin = testing::protobuf_twin_problems(options.argv[0], args);
    if (!twin.empty()) ADD_FAILURE() << twin;
  }
  return result;
}

namespace {

class MemoryCallCollector : public format::RecordVisitor {
 public:
  void on_record(const format::RecordView& record) override {
    using format::RecordKind;
    switch (record.record_kind()) {
      case RecordKind::kStringDef:
        strings_[record.section_id][record.as<format::StringDefRecord>().id] =
            std::string(record.tail<format::StringDefRecord>());
        break;
      case RecordKind::kApiDef: {
        const auto def = record.as<format::ApiDefRecord>();
        apis_[record.section_id][def.api] = def.name_string;
        break;
      }
      case RecordKind::kMemoryOperation: {
        MemoryCall call;
        call.tid = record.tid;
        call.operation = record.as<format::MemoryOperationRecord>();
        pending_.push_back({record.section_id, call});
        break;
      }
      case RecordKind::kMemoryInfo: {
        MemoryCall call;
        call.tid = record.tid;
        call.info = true;
        call.memory_info = record.as<format::MemoryInfoRecord>();
        pending_.push_back({record.section_id, call});
        break;
      }
      default: break;
    }
  }
  // Names resolved after the pass: definitions may follow the events.
  std::vector<MemoryCall> calls() {
    std::vector<MemoryCall> calls;
    for (auto& [section, call] : pending_) {
      const auto api = call.span().api;  // a copy: the record is packed
      call.api = strings_[section][apis_[section][api]];
      calls.push_back(call);
    }
    return calls;
  }

 private:
  std::map<uint64_t, std::map<uint32_t, std::string>> strings_;
  std::map<uint64_t, std::map<uint16_t, uint32_t>> apis_;
  std::vector<std::pair<uint64_t, MemoryCall>> pending_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::vector<MemoryCall> memory_calls(const std::string& trace) {
  std::string error;
  auto reader = format::TraceReader::open_file(trace, &error);
  EXPECT_TRUE(reader) << error;
  if (!reader) return {};
  MemoryCallCollector collector;
  const format::ReadReport report = reader->read(collector);
  EXPECT_TRUE(report.clean()) << format::summarize(report);
  return collector.calls();
}

JsonValue memory_report(const std::string& trace, const TempDir& dir) {
  const std::string json = dir / "memory.json";
  const ProcessResult run = run_proftrace({"memory", trace, "--json", json});
  EXPECT_TRUE(run.exited_with(0)) << run.describe();
  std::string error;
  auto document = testing::parse_json(read_file(json), &error);
  EXPECT_TRUE(document) << error;
  return document ? *document : JsonValue{};
}

std::string field_of_line(const std::string& text, const std::string& prefix, const std::string& key) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::istringstream words(line.substr(prefix.size()));
    std::string word;
    while (words >> word) {
      if (word.rfind(key + "=", 0) == 0) return word.substr(key.size() + 1);
    }
  }
  return "";
}

}  // namespace proflaunch::e2e
