// memory_phases under the real launcher and shim: the profiler's memory model
// against the program's own ledger at every phase marker (exact bytes:
// allocated, reserved, managed, pinned), the peak and what was live then,
// both failed allocations, the leak, every call recorded once under its
// runtime name (VMM calls under their driver names), and convert's counters.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tests/e2e/memory/support/memory_run.h"

namespace proflaunch::e2e {
namespace {

struct PhaseLine {
  std::string name;
  uint64_t allocated, reserved, pinned, managed;
};

std::vector<PhaseLine> phase_lines(const std::string& out) {
  std::vector<PhaseLine> phases;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("phase ", 0) != 0) continue;
    PhaseLine phase;
    char name[64] = {};
    unsigned long long a = 0, r = 0, p = 0, m = 0;
    if (std::sscanf(line.c_str(), "phase %63[^:]: allocated=%llu reserved=%llu pinned=%llu managed=%llu", name, &a,
                    &r, &p, &m) == 5)
      phases.push_back({name, a, r, p, m});
  }
  return phases;
}

const JsonValue* space_of(const JsonValue& report, const std::string& device) {
  for (const JsonValue& space : report["spaces"].items) {
    const JsonValue& d = space["device"];
    if ((d.type == JsonValue::Type::kString ? d.str() : d.text) == device) return &space;
  }
  return nullptr;
}

// The state of a space from its timeline at `time_ns` (zeros before its first row).
std::map<std::string, uint64_t> state_at(const JsonValue* space, uint64_t time_ns) {
  std::map<std::string, uint64_t> state;
  if (space == nullptr) return state;
  const auto& columns = (*space)["timeline_columns"].items;
  const JsonValue* last = nullptr;
  for (const JsonValue& row : (*space)["timeline"].items) {
    if (row.items.at(0).as_uint() > time_ns) break;
    last = &row;
  }
  for (size_t i = 0; i < columns.size(); ++i) state[columns[i].str()] = last ? last->items.at(i).as_uint() : 0;
  return state;
}

class MemoryPhases : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    trace_ = *dir_ / "phases.trace";
    run_ = new ProcessResult(testing::run_process(traced(trace_, {build_path("MEMORY_PHASES")})));
  }
  static void TearDownTestSuite() {
    delete run_;
    delete dir_;
  }
  static TempDir* dir_;
  static std::string trace_;
  static ProcessResult* run_;
};
TempDir* MemoryPhases::dir_ = nullptr;
std::string MemoryPhases::trace_;
ProcessResult* MemoryPhases::run_ = nullptr;

TEST_F(MemoryPhases, EveryPhaseMarkerShowsExactlyWhatTheProgramHeld) {
  ASSERT_TRUE(run_->exited_with(0)) << run_->describe();
  const std::vector<PhaseLine> phases = phase_lines(run_->out);
  ASSERT_EQ(phases.size(), 11u) << run_->out;
  const JsonValue report = memory_report(trace_, *dir_);
  const JsonValue* device = space_of(report, "0");
  const JsonValue* host = space_of(report, "host");
  ASSERT_NE(device, nullptr);
  ASSERT_NE(host, nullptr);
  // cudaMemGetInfo is called once per phase, at its end: the markers.
  const auto& markers = report["memory_info"].items;
  ASSERT_EQ(markers.size(), phases.size());
  for (size_t i = 0; i < phases.size(); ++i) {
    SCOPED_TRACE("phase " + phases[i].name);
    const uint64_t at = markers[i]["time_ns"].as_uint();
    const auto on_device = state_at(device, at);
    const auto on_host = state_at(host, at);
    EXPECT_EQ(on_device.at("allocated_bytes"), phases[i].allocated);
    EXPECT_EQ(on_device.at("reserved_bytes"), phases[i].reserved);
    EXPECT_EQ(on_device.at("managed_bytes"), phases[i].managed);
    EXPECT_EQ(on_host.at("pinned_bytes") + on_host.at("registered_bytes"), phases[i].pinned);
  }
  // The pool really kept freed memory, and VMM memory was both mapped and held.
  const auto pool_freed = std::find_if(phases.begin(), phases.end(), [](auto& p) { return p.name == "pool-freed"; });
  ASSERT_NE(pool_freed, phases.end());
  EXPECT_GT(pool_freed->reserved - pool_freed->allocated, (pool_freed - 1)->reserved - (pool_freed - 1)->allocated);
}

TEST_F(MemoryPhases, PeakLiveAtPeakFailuresAndTheLeakAreThoseOfTheProgram) {
  ASSERT_TRUE(run_->exited_with(0)) << run_->describe();
  const std::string summary = "memory_phases:";
  const JsonValue report = memory_report(trace_, *dir_);
  const JsonValue* device = space_of(report, "0");
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(std::to_string((*device)["peak_allocated"]["bytes"].as_uint()),
            field_of_line(run_->out, summary, "peak_allocated"));
  std::string live;
  for (const JsonValue& a : (*device)["live_at_peak"].items)
    live += (live.empty() ? "" : ",") + std::to_string(a["bytes"].as_uint());
  EXPECT_EQ(live, field_of_line(run_->out, summary, "live_at_peak"));
  EXPECT_EQ((*device)["live_at_peak_count"].as_uint(), (*device)["live_at_peak"].items.size());

  std::vector<const JsonValue*> on_device, on_host;
  for (const JsonValue& failure : report["failures"].items) {
    EXPECT_EQ(failure["result_name"].str(), "CUDA_ERROR_OUT_OF_MEMORY");
    (failure["space"].str() == (*device)["id"].str() ? on_device : on_host).push_back(&failure);
  }
  ASSERT_EQ(std::to_string(on_device.size()), field_of_line(run_->out, summary, "failures"));
  for (const JsonValue* failure : on_device) {
    EXPECT_EQ(std::to_string((*failure)["requested_bytes"].as_uint()), field_of_line(run_->out, summary, "failed_request"));
    EXPECT_EQ((*failure)["api"].str(), "cudaMalloc");
    EXPECT_EQ(std::to_string((*failure)["state"]["allocated_bytes"].as_uint()),
              field_of_line(run_->out, "phase peak:", "allocated"))
        << "the state when it failed: what the peak phase left";
  }
  // The pinned allocation no host can satisfy fails in the host space.
  ASSERT_EQ(std::to_string(on_host.size()), field_of_line(run_->out, summary, "pinned_failures"));
  EXPECT_EQ((*on_host[0])["space"].str(), (*space_of(report, "host"))["id"].str());
  EXPECT_EQ((*on_host[0])["api"].str(), "cudaMallocHost");
  EXPECT_EQ(std::to_string((*on_host[0])["requested_bytes"].as_uint()),
            field_of_line(run_->out, summary, "pinned_failed_request"));

  const auto& leaks = report["leaks"].items;
  ASSERT_EQ(leaks.size(), 1u);
  EXPECT_EQ(std::to_string(leaks[0]["bytes"].as_uint()), field_of_line(run_->out, summary, "leaked"));
  EXPECT_EQ(leaks[0]["api"].str(), "cudaMalloc");
  EXPECT_EQ(std::to_string(space_of(report, "host")->operator[]("peak_pinned")["bytes"].as_uint()),
            field_of_line(run_->out, summary, "pinned_peak"));
  EXPECT_EQ(std::to_string((*device)["peak_managed"]["bytes"].as_uint()),
            field_of_line(run_->out, summary, "managed_peak"));
}

TEST_F(MemoryPhases, EveryCallIsOneRecordUnderTheNameTheProgramCalled) {
  ASSERT_TRUE(run_->exited_with(0)) << run_->describe();
  const std::vector<MemoryCall> calls = memory_calls(trace_);
  std::map<std::string, int> by_api;
  std::set<uint64_t> correlation_ids;
  for (const MemoryCall& call : calls) {
    ++by_api[call.api];
    EXPECT_TRUE(correlation_ids.insert(uint64_t{call.span().correlation_id}).second) << "a call recorded twice: " << call.api;
    // Runtime calls are attributed to the runtime; the VMM calls were made on
    // the driver directly (through cudaGetDriverEntryPoint).
    EXPECT_EQ(call.via_runtime(), call.api.rfind("cuda", 0) == 0) << call.api;
  }
  const std::map<std::string, int> expected = {
      {"cudaMalloc", 7},        // leak, a, b, c, peak block, two failures
      {"cudaFree", 7},          // b, the peak block, volume, pitched, c, a, managed (cudaFree(nullptr) makes no driver call)
      {"cudaMallocPitch", 1},   {"cudaMalloc3D", 1},
      {"cudaMallocHost", 2},    {"cudaHostAlloc", 1},      {"cudaHostRegister", 1},  // one pinned allocation fails
      {"cudaHostUnregister", 1}, {"cudaFreeHost", 2},      {"cudaMallocManaged", 1},
      {"cudaMallocAsync", 3},   {"cudaFreeAsync", 3},      {"cudaMemPoolTrimTo", 2},
      {"cudaMemGetInfo", 11},
      {"cuMemAddressReserve", 1}, {"cuMemCreate", 2},      {"cuMemMap", 2},
      {"cuMemSetAccess", 2},    {"cuMemRelease", 2},       {"cuMemUnmap", 1},
      {"cuMemAddressFree", 1},
  };
  EXPECT_EQ(by_api, expected);

  std::map<std::string, int> failed;
  for (const MemoryCall& call : calls) {
    if (call.info || call.span().result == 0) continue;
    ++failed[call.api];
    EXPECT_EQ(+call.span().result, 2) << "CUDA_ERROR_OUT_OF_MEMORY";
    EXPECT_EQ(+call.operation.address, 0u);
    EXPECT_EQ(std::to_string(call.operation.bytes),
              field_of_line(run_->out, "memory_phases:", call.api == "cudaMalloc" ? "failed_request" : "pinned_failed_request"));
  }
  EXPECT_EQ(failed, (std::map<std::string, int>{{"cudaMalloc", 2}, {"cudaMallocHost", 1}}));

  // Stream-ordered calls carry their stream and their pool's reserved size.
  for (const MemoryCall& call : calls) {
    if (call.api != "cudaMallocAsync") continue;
    EXPECT_GT(+call.operation.stream, 2u) << "a created stream";
    EXPECT_NE(+call.operation.handle, 0u) << "the pool";
    EXPECT_NE(+call.operation.pool_reserved_bytes, format::kPoolReservedUnknown);
    EXPECT_GE(+call.operation.pool_reserved_bytes, +call.operation.bytes);
  }
}

// The launcher records call stacks by default: every block the report lists
// names the program's code that allocated it, and `stats --section
// alloc-sites` adds up every successful allocation by call site.
TEST_F(MemoryPhases, AllocationsCarryTheCallStacksOfTheProgram) {
  ASSERT_TRUE(run_->exited_with(0)) << run_->describe();
  const JsonValue report = memory_report(trace_, *dir_);
  const JsonValue* device = space_of(report, "0");
  ASSERT_NE(device, nullptr);
  const auto& live = (*device)["live_at_peak"].items;
  ASSERT_FALSE(live.empty());
  for (const JsonValue& a : live) {
    ASSERT_EQ(a["stack"].type, JsonValue::Type::kString) << "a live block without its stack";
    EXPECT_NE(a["stack"].str().find("main (memory_phases.cpp:"), std::string::npos) << a["stack"].str();
    if (a["api"].str() == "cudaMalloc")  // the program's helper made every cudaMalloc
      EXPECT_NE(a["stack"].str().find("device_alloc (memory_phases.cpp:"), std::string::npos) << a["stack"].str();
  }
  EXPECT_GE(report["counters"]["stacks_found"].as_uint(), live.size());

  uint64_t bytes = 0, count = 0;
  for (const MemoryCall& call : memory_calls(trace_)) {
    if (call.info || call.span().result != 0 ||
        call.operation.action != static_cast<uint8_t>(format::MemoryAction::kAcquire))
      continue;
    const auto kind = static_cast<format::AllocationKind>(call.operation.kind);
    if (kind == format::AllocationKind::kMapping || kind == format::AllocationKind::kAddressRange) continue;
    bytes += call.operation.bytes;
    ++count;
  }
  const ProcessResult stats = run_proftrace({"stats", "--section", "alloc-sites", "--csv", trace_});
  ASSERT_TRUE(stats.exited_with(0)) << stats.describe();
  std::istringstream lines(stats.out);
  std::string line;
  uint64_t table_bytes = 0, table_count = 0;
  bool names_main = false;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("Share", 0) == 0) continue;
    const size_t a = line.find(','), b = line.find(',', a + 1), c = line.find(',', b + 1);
    ASSERT_NE(c, std::string::npos) << line;
    table_bytes += std::stoull(line.substr(a + 1, b - a - 1));
    table_count += std::stoull(line.substr(b + 1, c - b - 1));
    names_main |= line.find("main (memory_phases.cpp:") != std::string::npos;
  }
  EXPECT_EQ(table_bytes, bytes) << stats.out;
  EXPECT_EQ(table_count, count) << stats.out;
  EXPECT_TRUE(names_main) << stats.out;
}

TEST_F(MemoryPhases, ConvertDrawsTheSameTotalsAsCounterTracks) {
  ASSERT_TRUE(run_->exited_with(0)) << run_->describe();
  const std::string json = *dir_ / "phases.json";
  const ProcessResult convert = run_proftrace({"convert", trace_, "-o", json});
  ASSERT_TRUE(convert.exited_with(0)) << convert.describe();
  testing::RunOptions check;
  check.argv = {build_path("PYTHON3"), build_path("PERFETTO_JSON_CHECKER"), json};
  const ProcessResult checked = testing::run_process(check);
  EXPECT_TRUE(checked.exited_with(0)) << checked.describe();

  std::ifstream in(json);
  std::stringstream text;
  text << in.rdbuf();
  std::string error;
  const auto document = testing::parse_json(text.str(), &error);
  ASSERT_TRUE(document) << error;
  uint64_t max_allocated = 0, max_pinned = 0;
  for (const JsonValue& event : (*document)["traceEvents"].items) {
    if (event["ph"].str() != "C") continue;
    if (event["name"].str() == "GPU 0 memory")
      max_allocated = std::max(max_allocated, event["args"]["allocated"].as_uint());
    if (event["name"].str() == "Host memory") max_pinned = std::max(max_pinned, event["args"]["pinned"].as_uint());
  }
  EXPECT_EQ(std::to_string(max_allocated), field_of_line(run_->out, "memory_phases:", "peak_allocated"));
  EXPECT_EQ(std::to_string(max_pinned), field_of_line(run_->out, "memory_phases:", "pinned_peak"));
}

}  // namespace
}  // namespace proflaunch::e2e
