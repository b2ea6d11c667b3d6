// `proftrace convert` on real traces of the training loop and the
// multi-threaded program: the JSON parses and passes the Perfetto checker;
// each device is a GPU process with one named track per stream; every
// launch, copy and memset is a GPU slice tied to its API call by a flow
// arrow (one flow_out, one flow_in, same correlation id); kernel names are
// demangled; copies carry their bandwidth.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/e2e/cuda/support/perfetto_json.h"
#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

constexpr uint32_t kLinuxPidLimit = 1u << 22;
constexpr double kH2dGbps = 12.0;  // the simulator's modelled pinned H2D bandwidth here

struct Converted {
  CudaTrace trace;
  PerfettoJson json;
};

void convert_and_check(const TempDir& dir, const std::vector<std::string>& program, Converted* out) {
  const ProcessResult run = testing::run_process(
      // Events: with CUPTI, host functions are still event-timed, and where one
      // borders a CUPTI-timed copy on a stream the converter trims the overlap
      // the two clock mappings leave (docs/limits.md), which skews the
      // copy's bandwidth argument this file checks to 1 %.
      traced(dir / "x.trace", program, {"--gpu-timing=events"}, {{"SIMGPU_H2D_GBPS", std::to_string(kH2dGbps)}}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  out->trace = load_trace_or_fail(dir / "x.trace");
  const ProcessResult convert = run_proftrace({"convert", dir / "x.trace", "-o", dir / "x.json"});
  ASSERT_TRUE(convert.exited_with(0)) << convert.describe();
  testing::RunOptions check;
  check.argv = {build_path("PYTHON3"), build_path("PERFETTO_JSON_CHECKER"), dir / "x.json"};
  const ProcessResult checked = testing::run_process(check);
  EXPECT_TRUE(checked.exited_with(0)) << checked.describe();
  std::string error;
  ASSERT_TRUE(load_perfetto_json(dir / "x.json", &out->json, &error)) << error;
}

// The GPU side of the JSON against the trace model: one GPU process per
// device, a named track per stream, one GPU slice per operation, each with
// a flow from its API slice.
void expect_gpu_tracks_and_flows(const Converted& c) {
  ASSERT_EQ(c.trace.images.size(), 1u);
  const ProcessImage& image = c.trace.images.front();
  std::set<uint32_t> gpu_pids;
  for (const auto& [pid, name] : c.json.process_names)
    if (pid >= kLinuxPidLimit) {
      gpu_pids.insert(pid);
      EXPECT_EQ(name.rfind("GPU 0 ", 0), 0u) << name;
    }
  ASSERT_EQ(gpu_pids.size(), 1u) << "one GPU process for the one simulated device";
  const uint32_t gpu_pid = *gpu_pids.begin();

  std::set<uint64_t> streams;
  std::map<uint64_t, const Operation*> by_correlation;
  for (const Operation& op : image.operations) {
    streams.insert(op.stream);
    by_correlation[op.span.correlation_id] = &op;
  }
  std::set<uint32_t> stream_tracks;
  for (const auto& [key, name] : c.json.thread_names) {
    if (key.first != gpu_pid) continue;
    if (name.rfind("CUDA syncs: ", 0) == 0) continue;  // Kineto's cuda_sync events, not a stream
    stream_tracks.insert(key.second);
    EXPECT_NE(name.find("(pid " + std::to_string(image.pid()) + ")"), std::string::npos) << name;
  }
  EXPECT_EQ(stream_tracks.size(), streams.size()) << "one track per stream";

  std::map<uint64_t, std::pair<const JsonValue*, const JsonValue*>> flows;  // bind_id -> (out, in)
  size_t gpu_slices = 0;
  for (const JsonValue* slice : c.json.slices()) {
    const std::string& category = (*slice)["cat"].str();
    const bool on_gpu = category == "kernel" || category == "gpu_memcpy" || category == "gpu_memset";
    if (on_gpu) {
      ++gpu_slices;
      EXPECT_EQ((*slice)["pid"].as_uint(), gpu_pid);
      EXPECT_TRUE(stream_tracks.count(static_cast<uint32_t>((*slice)["tid"].as_uint())));
    }
    if (!slice->has("bind_id")) continue;
    auto& pair = flows[(*slice)["bind_id"].as_uint()];
    if ((*slice)["flow_out"].boolean) {
      EXPECT_EQ(pair.first, nullptr) << "two flow_out for one bind_id";
      EXPECT_FALSE(on_gpu);
      pair.first = slice;
    }
    if ((*slice)["flow_in"].boolean) {
      EXPECT_EQ(pair.second, nullptr) << "two flow_in for one bind_id";
      EXPECT_TRUE(on_gpu);
      pair.second = slice;
    }
  }
  EXPECT_EQ(gpu_slices, image.operations.size());
  EXPECT_EQ(flows.size(), image.operations.size()) << "one flow per launch, copy and memset";
  for (const auto& [id, pair] : flows) {
    ASSERT_NE(pair.first, nullptr) << "flow " << id << " has no start";
    ASSERT_NE(pair.second, nullptr) << "flow " << id << " has no end";
    const uint64_t correlation = (*pair.first)["args"]["correlation"].as_uint();
    EXPECT_EQ((*pair.second)["args"]["correlation"].as_uint(), correlation);
    const auto op = by_correlation.find(correlation);
    ASSERT_NE(op, by_correlation.end());
    EXPECT_EQ((*pair.first)["name"].str(), op->second->api);
    EXPECT_EQ((*pair.first)["pid"].as_uint(), image.pid());
    EXPECT_EQ((*pair.first)["tid"].as_uint(), op->second->tid);
    if (op->second->kind == OperationKind::kLaunch) {
      // Demangled: the name a user reads, e.g. void simtorch::...<4, ...>(int, ...).
      EXPECT_EQ((*pair.second)["name"].str(), demangle(op->second->kernel));
      EXPECT_NE((*pair.second)["name"].str().rfind("_Z", 0), 0u);
    }
  }
}

TEST(PerfettoJson, TrainingLoop) {
  TempDir dir;
  Converted c;
  convert_and_check(dir, {build_path("TRAINING_LOOP"), "--steps", "3"}, &c);
  ASSERT_FALSE(HasFatalFailure());
  expect_gpu_tracks_and_flows(c);

  // At least one C++ kernel name that needed demangling is shown demangled.
  bool demangled_template = false;
  for (const JsonValue* slice : c.json.slices("kernel"))
    demangled_template |= (*slice)["name"].str().find("simtorch::vectorized_elementwise_kernel<4, "
                                                      "simtorch::ReluFunctor<float>") == 5;
  EXPECT_TRUE(demangled_template);

  // Copies: bandwidth = bytes / duration, and the pinned uploads (queued on
  // a busy copy stream) measure the simulator's modelled bandwidth.
  double best_pinned_h2d_gbps = 0;
  int copies = 0;
  for (const JsonValue* slice : c.json.slices("gpu_memcpy")) {
    ++copies;
    const JsonValue& args = (*slice)["args"];
    ASSERT_TRUE(args.has("memory bandwidth (GB/s)")) << "a copy without bandwidth";
    const double gbps = args["memory bandwidth (GB/s)"].as_double();
    const double duration_ns = (*slice)["dur"].as_double() * 1000;
    EXPECT_NEAR(gbps, static_cast<double>(args["bytes"].as_uint()) / duration_ns, 0.01 + gbps * 0.01);
    if (args["direction"].str() == "HtoD" && args["src_kind"].str() == "pinned" && args["bytes"].as_uint() > 65536)
      best_pinned_h2d_gbps = std::max(best_pinned_h2d_gbps, gbps);
  }
  EXPECT_EQ(copies, static_cast<int>(c.trace.images.front().copies().size()));
  EXPECT_GT(best_pinned_h2d_gbps, kH2dGbps * 0.85);
  EXPECT_LT(best_pinned_h2d_gbps, kH2dGbps * 1.02);
}

TEST(PerfettoJson, MultiStreamThreads) {
  TempDir dir;
  Converted c;
  convert_and_check(dir, {build_path("MULTI_STREAM_THREADS"), "--threads", "3", "--iterations", "2",
                          "--elements", "4096"},
                    &c);
  ASSERT_FALSE(HasFatalFailure());
  expect_gpu_tracks_and_flows(c);
}

}  // namespace
}  // namespace proflaunch::e2e
