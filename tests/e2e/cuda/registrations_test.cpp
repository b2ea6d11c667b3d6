// Registrations made by constructors, and host functions, as the trace shows
// them (issue 37, items 3 to 5), on `registrations` (programs/registrations.cpp):
//
// - a linked library's kernels are registered by its constructor, which runs
//   before the preloaded shim's: the calls are counted all the same, and
//   their ApiCount window holds the time they were made (before the section
//   started), not the writer's first flush;
// - a dlopen'ed plugin's registration is counted inside a window that
//   contains the dlopen;
// - every counted-call window is a true bound: first_ns <= last_ns;
// - with --capture-range=cudaProfilerApi, the calls made while recording is
//   paused before the window (the plugin's registrations inside dlopen,
//   cudaMalloc, cudaStreamCreate) are counted with windows that hold them,
//   before the capture window began;
// - host functions queued with cudaLaunchHostFunc and cudaStreamAddCallback
//   are named by the program's function (symbolized after the run like a
//   stack frame), not by the runtime's trampoline, in the JSON and in
//   `stats`, and `dump` keeps the raw address.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <sstream>

#include "tests/e2e/cuda/support/perfetto_json.h"
#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

struct TracedRun {
  TempDir dir;
  ProcessResult program;
  CudaTrace trace;
  const ProcessImage* image = nullptr;
};

// One traced run for every test (the program takes a second or two).
const TracedRun& traced_run() {
  static TracedRun* run = [] {
    auto* r = new TracedRun();
    r->program = testing::run_process(
        traced(r->dir / "x.trace", {build_path("REGISTRATIONS"), build_path("REGISTERING_PLUGIN")}));
    r->trace = load_trace_or_fail(r->dir / "x.trace");
    if (r->trace.images.size() == 1) r->image = &r->trace.images.front();
    return r;
  }();
  return *run;
}

#define REQUIRE_RUN(run)                                                   \
  ASSERT_TRUE((run).program.exited_with(0)) << (run).program.describe(); \
  ASSERT_NE((run).image, nullptr) << describe((run).trace)

uint64_t first_span_begin(const ProcessImage& image) {
  uint64_t first = UINT64_MAX;
  for (const SpanRecord& span : image.spans) first = std::min(first, span.span.begin_ns);
  return first;
}

TEST(Registrations, ConstructorsBeforeTheShimAreCounted) {
  const TracedRun& run = traced_run();
  REQUIRE_RUN(run);
  const ProcessImage& image = *run.image;
  // Two fat binaries (the linked library, the plugin) and three kernels.
  ASSERT_TRUE(image.counted_calls.count("__cudaRegisterFatBinary")) << describe(run.trace);
  EXPECT_EQ(image.counted_calls.at("__cudaRegisterFatBinary"), 2u);
  EXPECT_EQ(image.counted_calls.at("__cudaRegisterFunction"), 3u);
  // And the kernels are named (they were before: the names are kept either way).
  EXPECT_EQ(image.launch_count("library_scale"), 3) << describe(run.trace);
  EXPECT_EQ(image.launch_count("plugin_offset"), 3) << describe(run.trace);
}

TEST(Registrations, CountedWindowsHoldTheCalls) {
  const TracedRun& run = traced_run();
  REQUIRE_RUN(run);
  const ProcessImage& image = *run.image;
  ASSERT_TRUE(image.info.has_value());
  for (const ProcessImage::RawCount& count : image.raw_counts)
    EXPECT_LE(count.first_ns, count.last_ns) << count.name;

  // The linked library registered before main, before the shim started: a
  // window that begins before the section did, and before the first call.
  const uint64_t section_start = image.info->monotonic_ns;
  const uint64_t first_call = first_span_begin(image);
  uint64_t earliest_fat_binary = UINT64_MAX;
  for (const ProcessImage::RawCount& count : image.raw_counts)
    if (count.name == "__cudaRegisterFatBinary") earliest_fat_binary = std::min(earliest_fat_binary, count.first_ns);
  EXPECT_LT(earliest_fat_binary, section_start);
  EXPECT_LT(earliest_fat_binary, first_call);

  // The plugin registered inside dlopen: after cudaStreamCreate returned,
  // before its kernel's first launch. Some window must contain that span.
  uint64_t stream_created = 0, plugin_launched = UINT64_MAX;
  for (const HostCall& call : image.calls)
    if (call.api == "cudaStreamCreate") stream_created = call.span.end_ns;
  for (const Operation* op : image.launches())
    if (op->kernel.find("plugin_offset") != std::string::npos)
      plugin_launched = std::min(plugin_launched, op->span.begin_ns);
  ASSERT_NE(stream_created, 0u);
  bool contained = false;
  for (const ProcessImage::RawCount& count : image.raw_counts)
    if (count.name == "__cudaRegisterFatBinary" && count.first_ns <= plugin_launched && count.last_ns >= stream_created)
      contained = true;
  EXPECT_TRUE(contained) << "no __cudaRegisterFatBinary window holds the dlopen";
}

// The dlopen's CLOCK_MONOTONIC bounds the program printed.
std::pair<uint64_t, uint64_t> printed_dlopen(const std::string& out) {
  std::smatch match;
  if (!std::regex_search(out, match, std::regex(R"(dlopen from (\d+) to (\d+))"))) return {0, 0};
  return {std::stoull(match[1]), std::stoull(match[2])};
}

// Calls made while paused before a capture window are counted like those
// made before the shim started: the plugin's registration inside dlopen
// (before cudaProfilerStart) is counted, in a window that holds the dlopen
// and ends before the capture window began; the program's own calls before
// the window (cudaMalloc, cudaStreamCreate) too, not the ones after it.
TEST(Registrations, CallsWhilePausedBeforeAWindowAreCounted) {
  TempDir dir;
  const ProcessResult program =
      testing::run_process(traced(dir / "w.trace", {build_path("REGISTRATIONS"), build_path("REGISTERING_PLUGIN"),
                                                    "--profiler-window"},
                                  {"--capture-range=cudaProfilerApi"}));
  ASSERT_TRUE(program.exited_with(0)) << program.describe();
  const auto [dlopen_began, dlopen_ended] = printed_dlopen(program.out);
  ASSERT_NE(dlopen_began, 0u) << program.out;
  const CudaTrace trace = load_trace_or_fail(dir / "w.trace");
  ASSERT_EQ(trace.images.size(), 1u) << describe(trace);
  const ProcessImage& image = trace.images.front();
  ASSERT_FALSE(image.windows.empty()) << describe(trace);
  ASSERT_TRUE(image.info.has_value());
  const uint64_t window_began = image.windows.front().at_ns;

  // The linked library's (before the start) and the plugin's (paused).
  ASSERT_TRUE(image.counted_calls.count("__cudaRegisterFatBinary")) << describe(trace);
  EXPECT_EQ(image.counted_calls.at("__cudaRegisterFatBinary"), 2u);
  EXPECT_EQ(image.counted_calls.at("__cudaRegisterFunction"), 3u);
  EXPECT_EQ(image.counted_calls.count("cudaMalloc") ? image.counted_calls.at("cudaMalloc") : 0, 1u);
  EXPECT_EQ(image.counted_calls.count("cudaStreamCreate") ? image.counted_calls.at("cudaStreamCreate") : 0, 1u);
  // Made after the window closed: not written.
  EXPECT_EQ(image.counted_calls.count("cudaStreamDestroy"), 0u);
  EXPECT_EQ(image.launch_count("plugin_offset"), 3) << describe(trace);

  bool dlopen_held = false;
  for (const ProcessImage::RawCount& count : image.raw_counts) {
    EXPECT_LE(count.first_ns, count.last_ns) << count.name;
    if (count.name == "cudaMalloc" || count.name == "cudaStreamCreate") {
      // One window for every API counted while paused: from the first
      // such call to the last.
      EXPECT_LT(count.first_ns, dlopen_began) << count.name << " was called before the dlopen";
      const uint64_t started = image.info->monotonic_ns;  // a packed record's field: copied, not bound
      EXPECT_GE(count.first_ns, started) << count.name << " was called after the start";
      EXPECT_LT(count.last_ns, window_began) << count.name;
    }
    if (count.name == "__cudaRegisterFatBinary" && count.first_ns <= dlopen_ended && count.last_ns >= dlopen_began) {
      dlopen_held = true;
      EXPECT_LT(count.last_ns, window_began) << "the registration was made before the window";
    }
  }
  EXPECT_TRUE(dlopen_held) << "no __cudaRegisterFatBinary window holds the dlopen";
}

// The addresses the program printed for its host functions.
std::map<std::string, uint64_t> printed_addresses(const std::string& out) {
  std::map<std::string, uint64_t> addresses;
  const std::regex line(R"((\w+) at (0x[0-9a-f]+))");
  for (std::sregex_iterator it(out.begin(), out.end(), line), end; it != end; ++it)
    addresses[(*it)[1]] = std::stoull((*it)[2], nullptr, 16);
  return addresses;
}

TEST(Registrations, HostFunctionsRecordTheProgramsFunction) {
  const TracedRun& run = traced_run();
  REQUIRE_RUN(run);
  const std::map<std::string, uint64_t> printed = printed_addresses(run.program.out);
  ASSERT_EQ(printed.size(), 2u) << run.program.out;
  std::map<std::string, int> by_api;
  for (const Operation* op : run.image->launches()) {
    if (!op->host_function()) continue;
    if (op->api == "cudaLaunchHostFunc") EXPECT_EQ(op->launch.function, printed.at("mark_step_done"));
    else if (op->api == "cudaStreamAddCallback") EXPECT_EQ(op->launch.function, printed.at("report_stream_done"));
    ++by_api[op->api];
  }
  EXPECT_EQ(by_api["cudaLaunchHostFunc"], 3);
  EXPECT_EQ(by_api["cudaStreamAddCallback"], 3);

  // dump shows the raw address.
  const ProcessResult dump = run_proftrace({"dump", run.dir / "x.trace"});
  ASSERT_TRUE(dump.exited_with(0)) << dump.describe();
  std::ostringstream hex;
  hex << "function=0x" << std::hex << printed.at("report_stream_done");
  EXPECT_NE(dump.out.find(hex.str()), std::string::npos) << hex.str();
}

// Every output that names GPU work names a host function by the program's
// function, symbolized like a stack frame (both are static: dladdr, which the
// shim has, cannot name them), never by the runtime's trampoline or
// module+offset.
TEST(Registrations, HostFunctionsAreNamedInJsonAndStats) {
  const TracedRun& run = traced_run();
  REQUIRE_RUN(run);
  const ProcessResult convert = run_proftrace({"convert", run.dir / "x.trace", "-o", run.dir / "x.json"});
  ASSERT_TRUE(convert.exited_with(0)) << convert.describe();
  PerfettoJson json;
  std::string error;
  ASSERT_TRUE(load_perfetto_json(run.dir / "x.json", &json, &error)) << error;
  std::map<std::string, int> host_slices, gpu_slices;
  for (const JsonValue* slice : json.slices()) {
    const JsonValue& args = (*slice)["args"];
    if ((*slice)["cat"].str() == "gpu.host_function") ++gpu_slices[(*slice)["name"].str()];
    else if (args["host_function"].type == JsonValue::Type::kString) ++host_slices[args["host_function"].str()];
  }
  auto named = [](const std::map<std::string, int>& slices, const std::string& function) {
    int n = 0;
    for (const auto& [name, count] : slices)
      if (name.find(function) != std::string::npos) n += count;
    return n;
  };
  auto show = [](const std::map<std::string, int>& slices) {
    std::string text;
    for (const auto& [name, count] : slices) text += name + " x" + std::to_string(count) + "\n";
    return text;
  };
  // The calls' args, then the GPU slices.
  EXPECT_EQ(named(host_slices, "mark_step_done"), 3) << show(host_slices);
  EXPECT_EQ(named(host_slices, "report_stream_done"), 3) << show(host_slices);
  EXPECT_EQ(named(gpu_slices, "mark_step_done"), 3) << show(gpu_slices);
  EXPECT_EQ(named(gpu_slices, "report_stream_done"), 3) << show(gpu_slices);
  EXPECT_EQ(named(host_slices, "+0x"), 0) << show(host_slices);
  EXPECT_EQ(named(gpu_slices, "+0x"), 0) << show(gpu_slices);

  // stats (and so the report, which shows stats' tables): a note under the
  // kernel table, with each function's count. (The name is DWARF's: no
  // parameters for these file-local functions.)
  const ProcessResult stats = run_proftrace({"stats", run.dir / "x.trace", "--section", "gpu-kernels"});
  ASSERT_TRUE(stats.exited_with(0)) << stats.describe();
  EXPECT_NE(stats.out.find("mark_step_done 3 times"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("report_stream_done 3 times"), std::string::npos)
      << stats.out;
  EXPECT_EQ(stats.out.find("launches without GPU time"), std::string::npos) << stats.out;

  // The SQL export: the kernels rows of host functions name them.
  const ProcessResult exported =
      run_proftrace({"export", "--quiet", "--sqlite", run.dir / "x.sqlite", run.dir / "x.trace"});
  ASSERT_TRUE(exported.exited_with(0)) << exported.describe();
  testing::RunOptions query;
  query.argv = {build_path("PYTHON3"), "-c",
                "import sqlite3, sys\n"
                "db = sqlite3.connect(sys.argv[1])\n"
                "for name, n in db.execute('SELECT f.name, count(*) FROM kernels k JOIN functions f "
                "ON f.id = k.function_id WHERE k.host_function GROUP BY f.name ORDER BY f.name'):\n"
                "    print(f'{name} x{n}')\n",
                run.dir / "x.sqlite"};
  const ProcessResult rows = testing::run_process(query);
  ASSERT_TRUE(rows.exited_with(0)) << rows.describe();
  EXPECT_NE(rows.out.find("mark_step_done x3"), std::string::npos) << rows.out;
  EXPECT_NE(rows.out.find("report_stream_done x3"), std::string::npos) << rows.out;

  // The launcher's symbol table has them, for a trace converted where the
  // program is not: under entry + 1, the key the lookup asks for. The
  // function is the outermost depth (-O2 inlines the atomic increment into
  // mark_step_done's first instruction).
  const ProcessResult dump = run_proftrace({"dump", run.dir / "x.trace"});
  ASSERT_TRUE(dump.exited_with(0)) << dump.describe();
  const std::map<std::string, uint64_t> printed = printed_addresses(run.program.out);
  ASSERT_EQ(printed.size(), 2u) << run.program.out;
  for (const auto& [function, address] : printed) {
    std::ostringstream key;
    key << "address=0x" << std::hex << address + 1 << " ";
    std::string lines;
    for (size_t at = dump.out.find(key.str()); at != std::string::npos; at = dump.out.find(key.str(), at + 1))
      lines += dump.out.substr(at, dump.out.find('\n', at) - at) + "\n";
    ASSERT_FALSE(lines.empty()) << function << ": no SymbolDef at " << key.str();
    EXPECT_NE(lines.find("function=\"" + function + "\""), std::string::npos) << lines;
  }
}

}  // namespace
}  // namespace proflaunch::e2e
