// NVTX end to end: nvtx_ranges (programs/) and its library module, built
// with the toolkit's real nvtx3 headers, under proflaunch; the trace read
// back through `proftrace dump`, `convert` and `stats`. Every case also runs
// the program untraced and requires the same output and exit status.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>

#include "tests/e2e/cuda/support/traced_run.h"
#include "tests/unit/tools/json_value.h"

namespace proflaunch::e2e {
namespace {

const int kSteps = 3;
constexpr size_t kMaxMessageBytes = 8192 - 80;  // kMaxEventRecordBytes - sizeof(NvtxEventRecord)

struct NvtxLine {
  std::string type, api, message, domain, rest;
  int result = 0;
  size_t message_bytes = 0;
  uint32_t tid = 0;
};

// The NvtxEvent and NvtxNameDef/NvtxDomainDef lines of `proftrace dump`.
struct Dumped {
  std::vector<NvtxLine> events;
  std::vector<std::string> definitions;
  std::string text;
};

// The value of ` name=` in a dump line: a quoted string (unescaped) or a bare word.
std::string field(const std::string& line, const std::string& name) {
  const std::string key = " " + name + "=";
  const size_t at = line.find(key);
  if (at == std::string::npos) return "";
  size_t i = at + key.size();
  std::string value;
  if (i < line.size() && line[i] == '"') {
    for (++i; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) ++i;
      value += line[i];
    }
    return value;
  }
  while (i < line.size() && line[i] != ' ') value += line[i++];
  return value;
}

Dumped dump(const std::string& trace) {
  const ProcessResult result = run_proftrace({"dump", trace});
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  Dumped d;
  d.text = result.out;
  std::istringstream in(result.out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("NvtxEvent ", 0) == 0) {
      NvtxLine e;
      e.type = field(line, "type");
      e.api = field(line, "api");
      e.domain = field(line, "domain");
      e.message = field(line, "message");
      e.result = std::atoi(field(line, "result").c_str());
      e.message_bytes = std::strtoul(field(line, "message_bytes").c_str(), nullptr, 10);
      e.tid = static_cast<uint32_t>(std::strtoul(field(line, "tid").c_str(), nullptr, 10));
      e.rest = line;
      d.events.push_back(e);
    } else if (line.rfind("Nvtx", 0) == 0) {
      d.definitions.push_back(line);
    }
  }
  return d;
}

int count_type(const Dumped& d, const std::string& type) {
  int n = 0;
  for (const NvtxLine& e : d.events) n += e.type == type;
  return n;
}

bool has_definition(const Dumped& d, const std::string& kind, const std::string& name) {
  for (const std::string& line : d.definitions)
    if (line.find(kind) != std::string::npos && line.find("name=\"" + name + "\"") != std::string::npos) return true;
  return false;
}

struct Pair {
  ProcessResult untraced, traced;
  std::string trace;
};

Pair run_both(const TempDir& dir, const std::vector<std::string>& program, const std::vector<std::string>& launcher = {},
              const std::vector<std::pair<std::string, std::string>>& env = {}) {
  Pair p;
  p.untraced = testing::run_process(untraced(program, env));
  p.trace = dir.path() + "/nvtx.trace";
  p.traced = testing::run_process(traced(p.trace, program, launcher, env));
  return p;
}

TEST(Nvtx, EveryModuleThreadAndKindOfCallIsRecorded) {
  TempDir dir;
  const Pair run = run_both(dir, {build_path("NVTX_RANGES"), "--steps", std::to_string(kSteps)});
  EXPECT_EQ(run.traced.status, run.untraced.status);
  EXPECT_EQ(run.traced.out, run.untraced.out);
  ASSERT_TRUE(run.traced.exited_with(0)) << run.traced.describe();
  const Dumped d = dump(run.trace);

  // Pushes: step + forward per step, 4 in the module, 2 per worker, "left
  // open"; pops: the same but "left open", plus the unmatched one.
  EXPECT_EQ(count_type(d, "push"), 2 * kSteps + 4 + 4 + 1);
  EXPECT_EQ(count_type(d, "pop"), 2 * kSteps + 4 + 4 + 1);
  EXPECT_EQ(count_type(d, "mark"), kSteps + 2);
  EXPECT_EQ(count_type(d, "start"), 1);
  EXPECT_EQ(count_type(d, "end"), 1);

  // The module's domain, registered string and category; the threads' and
  // the stream's names.
  EXPECT_TRUE(has_definition(d, "NvtxDomainDef", "nvtx_module"));
  EXPECT_TRUE(has_definition(d, "kind=registered-string", "module step"));
  EXPECT_TRUE(has_definition(d, "kind=category", "module category"));
  EXPECT_TRUE(has_definition(d, "kind=os-thread", "nvtx worker 0"));
  EXPECT_TRUE(has_definition(d, "kind=os-thread", "nvtx worker 1"));
  EXPECT_TRUE(has_definition(d, "kind=cuda-stream", "copy stream"));
  EXPECT_TRUE(has_definition(d, "kind=sync-user", "queue lock"));
  EXPECT_EQ(count_type(d, "sync-acquire-start"), 2);
  EXPECT_EQ(count_type(d, "sync-acquire-success"), 1);
  EXPECT_EQ(count_type(d, "sync-acquire-failed"), 1);
  EXPECT_EQ(count_type(d, "sync-releasing"), 1);

  int unmatched = 0, module_pushes = 0, nested = 0;
  std::map<uint32_t, int> pushes_by_tid;
  for (const NvtxLine& e : d.events) {
    if (e.type == "push") ++pushes_by_tid[e.tid];
    if (e.rest.find("unmatched=yes") != std::string::npos) {
      ++unmatched;
      EXPECT_EQ(e.result, -1);
      EXPECT_EQ(e.type, "pop");
    }
    if (e.api == "nvtxDomainRangePushEx") {
      ++module_pushes;
      EXPECT_NE(e.domain, "0x0");
      EXPECT_NE(e.rest.find("registered="), std::string::npos);
      EXPECT_NE(e.rest.find("category=7"), std::string::npos);
    }
    if (e.type == "push" && e.message == "forward") {
      ++nested;
      EXPECT_EQ(e.result, 1) << "forward is pushed inside a step";
    }
    if (e.type == "mark" && e.message == "loss computed") EXPECT_NE(e.rest.find("color=0xff00ff00"), std::string::npos);
  }
  EXPECT_EQ(unmatched, 1);
  EXPECT_EQ(module_pushes, 4);
  EXPECT_EQ(nested, kSteps);
  EXPECT_EQ(pushes_by_tid.size(), 3u) << "main thread and two workers";

  // The 20 000-character message is cut to fit its record, and says so; the
  // wide one arrives as UTF-8.
  bool long_seen = false, wide_seen = false;
  for (const NvtxLine& e : d.events) {
    if (e.type != "mark") continue;
    if (e.message_bytes > 1000) {
      long_seen = true;
      EXPECT_EQ(e.message_bytes, kMaxMessageBytes);
      EXPECT_NE(e.rest.find("truncated=yes"), std::string::npos);
    }
    if (e.message == "wide \u00e9t\u00e9 \u2713") wide_seen = true;
  }
  EXPECT_TRUE(long_seen);
  EXPECT_TRUE(wide_seen);
  EXPECT_NE(d.text.find("ApiDef"), std::string::npos);
  EXPECT_NE(d.text.find("name=\"nvtxRangePushA\""), std::string::npos);
}

TEST(Nvtx, RangesAreSlicesOnTheirThreadsAndTheTablesAnswer) {
  TempDir dir;
  const Pair run = run_both(dir, {build_path("NVTX_RANGES"), "--steps", std::to_string(kSteps)});
  ASSERT_TRUE(run.traced.exited_with(0)) << run.traced.describe();
  const std::string json_path = dir.path() + "/nvtx.json";
  const ProcessResult convert = run_proftrace({"convert", run.trace, "-o", json_path});
  ASSERT_TRUE(convert.exited_with(0)) << convert.describe();
  std::ifstream in(json_path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string error;
  const std::optional<testing::JsonValue> parsed = testing::parse_json(text, &error);
  ASSERT_TRUE(parsed.has_value()) << error;
  const testing::JsonValue& json = *parsed;
  std::map<std::pair<int64_t, int64_t>, std::string> track_names;  // (pid, tid) -> name
  for (const testing::JsonValue& e : json["traceEvents"].items)
    if (e["ph"].str() == "M" && e["name"].str() == "thread_name")
      track_names[{e["pid"].as_int(), e["tid"].as_int()}] = e["args"]["name"].str();
  std::map<std::string, int> slices;  // "<track name>|<slice name>"
  int open_at_end = 0, async_begin = 0, async_end = 0;
  std::map<std::string, int> projected;  // GPU projections, by range name
  for (const testing::JsonValue& e : json["traceEvents"].items) {
    // Ranges are Kineto's user_annotation, their GPU projections
    // gpu_user_annotation; waits for sync objects and marks stay "nvtx".
    const std::string cat = e.has("cat") ? e["cat"].str() : "";
    if (cat != "user_annotation" && cat != "gpu_user_annotation" && cat != "nvtx") continue;
    const std::string ph = e["ph"].str();
    EXPECT_EQ(cat == "gpu_user_annotation", ph == "X" && e["args"].has("projection")) << e["name"].str();
    if (ph == "X" && e["args"].has("projection")) {
      // Kineto's convention: on the track of the stream whose work the
      // range covers (its consumers match annotations to kernels by pid and
      // tid); the program's ranges launch on its copy stream and the
      // default stream, one at a time, so every one nests there.
      const std::string& track = track_names[{e["pid"].as_int(), e["tid"].as_int()}];
      EXPECT_EQ(track.rfind("NVTX GPU ranges", 0), std::string::npos) << track;
      EXPECT_TRUE(track.find("stream") != std::string::npos) << track;
      ++projected[e["name"].str()];
      continue;
    }
    if (ph == "X") {
      ++slices[track_names[{e["pid"].as_int(), e["tid"].as_int()}] + "|" + e["name"].str()];
      if (e["args"].has("open_at_end")) {
        ++open_at_end;
        EXPECT_EQ(e["name"].str(), "left open");
      }
    }
    if (ph == "b" && e["name"].str() == "whole run") ++async_begin;
    if (ph == "e" && e["name"].str() == "whole run") ++async_end;
  }
  int steps = 0, module = 0, workers = 0, acquired = 0;
  for (const auto& [key, n] : slices) {
    const std::string track = key.substr(0, key.find('|'));
    const std::string name = key.substr(key.find('|') + 1);
    if (name.rfind("ProfilerStep#", 0) == 0) {  // Kineto's steps, from the NVTX steps: a track of their own
      EXPECT_EQ(track.rfind("Steps: ", 0), 0u) << key;
      continue;
    }
    EXPECT_EQ(track.rfind("NVTX ", 0), 0u) << key;
    if (name.rfind("step ", 0) == 0) {
      steps += n;
      EXPECT_EQ(track.find("NVTX default: e2e_nvtx_ranges"), 0u) << track;
    }
    if (name == "acquire queue lock") {
      acquired += n;
      EXPECT_EQ(track.find("NVTX nvtx_module: "), 0u) << track;
    }
    if (name == "module step") {
      module += n;
      EXPECT_EQ(track.find("NVTX nvtx_module: "), 0u) << track;
    }
    if (name.rfind("worker ", 0) == 0) {
      workers += n;
      EXPECT_NE(track.find("nvtx worker"), std::string::npos) << "the NVTX thread name: " << track;
    }
  }
  EXPECT_EQ(steps, kSteps);
  EXPECT_EQ(module, 4);
  EXPECT_EQ(workers, 4);
  EXPECT_EQ(acquired, 2) << "one successful and one failed acquisition";
  // Only the ranges that launched GPU work are projected onto the GPU.
  const std::map<std::string, int> expected_projected = {
      {"step 0", 1}, {"step 1", 1}, {"step 2", 1}, {"forward", kSteps}, {"whole run", 1}};
  EXPECT_EQ(projected, expected_projected);
  EXPECT_EQ(open_at_end, 1);
  // The stream the program named carries its copies and memsets under that name.
  bool named_stream = false;
  for (const auto& [key, name] : track_names) named_stream = named_stream || name.rfind("copy stream (pid ", 0) == 0;
  EXPECT_TRUE(named_stream);
  EXPECT_EQ(async_begin, 1);
  EXPECT_EQ(async_end, 1);

  const ProcessResult stats = run_proftrace({"stats", "--section", "nvtx", "--section", "nvtx-gpu", run.trace});
  ASSERT_TRUE(stats.exited_with(0)) << stats.describe();
  const std::string gpu_table = stats.out.substr(stats.out.find("projected onto the GPU"));
  const std::string host_table = stats.out.substr(0, stats.out.find("projected onto the GPU"));
  EXPECT_NE(host_table.find("nvtx_module: module step"), std::string::npos) << host_table;
  EXPECT_TRUE(std::regex_search(host_table, std::regex(" 4 +\\d+ +\\d+ +\\d+ +\\d+ +nvtx_module: module step")))
      << host_table;
  EXPECT_NE(host_table.find("1 ranges still open"), std::string::npos);
  // Only the ranges that launched copies and memsets are projected.
  for (const char* name : {"step 0", "step 1", "step 2", "forward", "whole run"})
    EXPECT_NE(gpu_table.find(name), std::string::npos) << name << "\n" << gpu_table;
  EXPECT_EQ(gpu_table.find("module step"), std::string::npos) << gpu_table;
  EXPECT_TRUE(std::regex_search(gpu_table, std::regex(" 3 +\\d+ +\\d+ +\\d+ +\\d+ +forward"))) << gpu_table;
}

TEST(Nvtx, ARangeOpenAtACrashIsInTheTrace) {
  TempDir dir;
  const Pair run = run_both(dir, {build_path("NVTX_RANGES"), "--steps", "1", "--crash"});
  // proflaunch exits 128 + n for a program killed by signal n.
  EXPECT_TRUE(run.untraced.killed_by(SIGSEGV)) << run.untraced.describe();
  EXPECT_TRUE(run.traced.exited_with(128 + SIGSEGV)) << run.traced.describe();
  EXPECT_EQ(run.traced.out, run.untraced.out);
  const Dumped d = dump(run.trace);
  bool open = false;
  for (const NvtxLine& e : d.events) open = open || (e.type == "push" && e.message == "left open");
  EXPECT_TRUE(open);
}

TEST(Nvtx, OffWhenNotTracedOrWhenTheProgramHasItsOwnTool) {
  TempDir dir;
  {
    const Pair run = run_both(dir, {build_path("NVTX_RANGES"), "--steps", "1"}, {"--trace=cuda"});
    EXPECT_EQ(run.traced.out, run.untraced.out);
    EXPECT_EQ(dump(run.trace).events.size(), 0u);
  }
  {
    const std::vector<std::pair<std::string, std::string>> own = {{"NVTX_INJECTION64_PATH", "/nonexistent/tool.so"}};
    const Pair run = run_both(dir, {build_path("NVTX_RANGES"), "--steps", "1"}, {"--force"}, own);
    EXPECT_EQ(run.traced.out, run.untraced.out);
    EXPECT_NE(run.traced.err.find("NVTX_INJECTION64_PATH is already set (/nonexistent/tool.so)"), std::string::npos)
        << run.traced.err;
    EXPECT_EQ(dump(run.trace).events.size(), 0u);
  }
}

TEST(Nvtx, APythonProgramUsingNvtxThroughCtypes) {
  TempDir dir;
  const std::string script = "import ctypes, sys; lib = ctypes.CDLL(sys.argv[1]); print(lib.nvtx_module_work(5))";
  const Pair run = run_both(dir, {build_path("SYSTEM_PYTHON3"), "-c", script, build_path("NVTX_MODULE")});
  EXPECT_EQ(run.traced.out, run.untraced.out);
  EXPECT_EQ(run.traced.out, "10\n");
  const Dumped d = dump(run.trace);
  int pushes = 0;
  for (const NvtxLine& e : d.events) pushes += e.api == "nvtxDomainRangePushEx";
  EXPECT_EQ(pushes, 5);
  EXPECT_EQ(count_type(d, "pop"), 5);
}

}  // namespace
}  // namespace proflaunch::e2e
