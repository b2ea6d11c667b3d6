// proftrace convert's JSON as the PyTorch profiler (Kineto) writes it, on
// hand-built traces: the kernel args HTA and the TensorBoard plugin read,
// worked out by hand from the launch, FunctionDef and DeviceInfo; the
// top-level distributedInfo and deviceProperties; and the Kineto checker
// (tests/kineto/check_kineto_trace.py) accepting the result.
#include <gtest/gtest.h>

#include "tests/unit/tools/tool_fixture.h"
#include "tests/unit/tools/trace_scenarios.h"

namespace proflaunch::testing {
namespace {

using namespace proflaunch::format;

constexpr uint64_t kStart = 5'000'000'000;
constexpr uint64_t kKernel = 0xF00;
constexpr uint64_t kBareKernel = 0xF01;  // a FunctionDef without resource attributes

// An H100-like device, as in occupancy_test.cpp: 132 SMs, 2048 threads, 32
// blocks, 64 Ki registers and 228 KiB shared memory per SM, warp size 32.
DeviceSpec h100() {
  DeviceSpec d;
  d.name = "H100-like";
  d.multiprocessor_count = 132;
  d.total_memory_bytes = 80ull << 30;
  d.max_threads_per_multiprocessor = 2048;
  d.max_blocks_per_multiprocessor = 32;
  d.registers_per_multiprocessor = 65536;
  d.registers_per_block = 65536;
  d.shared_bytes_per_multiprocessor = 228 * 1024;
  d.shared_bytes_per_block = 48 * 1024;
  d.shared_bytes_per_block_optin = 227 * 1024;
  d.reserved_shared_bytes_per_block = 1024;
  d.warp_size = 32;
  d.compute_capability_major = 9;
  d.compute_capability_minor = 0;
  return d;
}

// Rank 1 of 2, an NCCL user, on one H100-like GPU: one kernel with known
// resources, one without, a copy.
std::string rank_trace() {
  TraceBuilder trace;
  ProcessSpec spec;
  spec.pid = 4321;
  spec.ppid = 1;
  spec.host = "node1";
  spec.argv = {"python", "train.py"};
  spec.rank = 1;
  spec.world_size = 2;
  spec.monotonic_ns = kStart;
  const uint64_t section = 0x51;
  trace.process(section, spec);
  TracedProcess p{section, spec.pid, kStart};
  p.launch_api = trace.api(section, "cuLaunchKernel", ApiDomain::kDriver);
  p.copy_api = trace.api(section, "cudaMemcpyAsync", ApiDomain::kRuntime);
  trace.api(section, "ncclAllReduce", ApiDomain::kCollective);
  trace.device(section, h100());
  FunctionResources resources;
  resources.registers_per_thread = 64;
  resources.static_shared_bytes = 2048;
  resources.known = kFunctionRegisters | kFunctionStaticShared;
  trace.function(section, kKernel, "_Z5scaleIfEvPT_i", 0, resources);
  trace.function(section, kBareKernel, "_Z3barv");

  KernelLaunchRecord big = launch(p, 1, kStart + 1000, kStart + 2000, kKernel, kStreamLegacy);
  big.grid = {660, 2, 1};  // 1320 blocks: 10 per SM
  big.block = {256, 1, 1};
  big.dynamic_shared_bytes = 1024;
  trace.event(section, 4321, big);
  trace.event(section, 4321, launch(p, 2, kStart + 3000, kStart + 4000, kBareKernel, kStreamLegacy));
  trace.event(section, 4321, copy(p, 3, kStart + 5000, kStart + 6000, 1'000'000, kStreamLegacy));
  trace.event(section, 9999, activity(1, kStart + 10'000, kStart + 20'000, kStreamLegacy, GpuActivityKind::kKernel));
  trace.event(section, 9999, activity(2, kStart + 30'000, kStart + 31'000, kStreamLegacy, GpuActivityKind::kKernel));
  trace.event(section, 9999,
              activity(3, kStart + 40'000, kStart + 42'000, kStreamLegacy, GpuActivityKind::kMemoryCopy));
  return write_trace(trace, "rank1.trace");
}

int run_kineto_checker(const std::string& json, const std::string& flags, std::string* output) {
  const CommandOutput check =
      run_shell(std::string(PROFLAUNCH_PYTHON3) + " " + KINETO_CHECKER + " " + json + " " + flags);
  *output = check.out + check.err;
  return check.exit_code;
}

TEST(KinetoJson, KernelsCarryKinetosResourceAndOccupancyArgs) {
  const ConvertedTrace out = convert_files({rank_trace()});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const JsonValue* kernel = out.slice_named("void scale<float>(float*, int)");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ((*kernel)["cat"].str(), "kernel");
  const JsonValue& args = (*kernel)["args"];
  EXPECT_EQ(args["device"].as_int(), 0);
  EXPECT_GT(args["stream"].as_uint(), 0u);
  EXPECT_EQ(args["correlation"].as_uint(), 1u);
  EXPECT_EQ(dim3_of(args["grid"]), (std::vector<uint64_t>{660, 2, 1}));
  EXPECT_EQ(dim3_of(args["block"]), (std::vector<uint64_t>{256, 1, 1}));
  EXPECT_EQ(args["registers per thread"].as_uint(), 64u);
  EXPECT_EQ(args["shared memory"].as_uint(), 3072u) << "static 2048 + dynamic 1024";
  // The grid over the SMs: 1320 / 132 = 10 blocks, x 8 warps.
  EXPECT_EQ(args["blocks per SM"].str(), "10.000");
  EXPECT_EQ(args["warps per SM"].str(), "80.000");
  // 64 registers x 32 threads = 2048 per warp: 65536 / 2048 = 32 warps = 4
  // blocks of 8 warps per SM (shared memory: 4 KiB per block with the
  // reserved 1 KiB, 57 blocks; threads: 8; blocks: 32). The grid gives each
  // SM 10 blocks, more than 4: 4 x 8 = 32 of 64 warps.
  EXPECT_EQ(args["est. achieved occupancy %"].as_int(), 50);
  EXPECT_EQ(args["shared_bytes"].as_uint(), 1024u) << "proflaunch's own: the dynamic part";

  // Without the function's resources: the shape and the spread, no occupancy.
  const JsonValue* bare = out.slice_named("bar()");
  ASSERT_NE(bare, nullptr);
  const JsonValue& bare_args = (*bare)["args"];
  EXPECT_EQ(bare_args["blocks per SM"].str(), "0.970") << "128 blocks on 132 SMs";
  EXPECT_FALSE(bare_args.has("registers per thread"));
  EXPECT_FALSE(bare_args.has("shared memory"));
  EXPECT_FALSE(bare_args.has("est. achieved occupancy %"));
  EXPECT_EQ(bare_args["stream"].as_uint(), args["stream"].as_uint()) << "one stream, one number";

  const JsonValue* launch_call = out.slice_named("cuLaunchKernel");
  ASSERT_NE(launch_call, nullptr);
  EXPECT_EQ((*launch_call)["cat"].str(), "cuda_driver");
  EXPECT_EQ((*launch_call)["args"]["correlation"].as_uint(), 1u);
  EXPECT_FALSE((*launch_call)["args"].has("stream")) << "HTA takes an event with a stream for GPU work";
  EXPECT_EQ((*launch_call)["args"]["target_stream"].str(), "legacy default");

  const JsonValue* copy_slice = out.slice_named("Memcpy HtoD");
  ASSERT_NE(copy_slice, nullptr);
  EXPECT_EQ((*copy_slice)["cat"].str(), "gpu_memcpy");
  EXPECT_EQ((*copy_slice)["args"]["bytes"].as_uint(), 1'000'000u);
  EXPECT_EQ((*copy_slice)["args"]["memory bandwidth (GB/s)"].str(), "500.000") << "1 MB in 2 us";

  std::string output;
  EXPECT_EQ(run_kineto_checker(out.json_path, "--require-categories kernel,gpu_memcpy,cuda_driver,cuda_runtime",
                               &output), 0)
      << output;
}

TEST(KinetoJson, TheTopCarriesTheRankAndTheDevicesBeforeTheEvents) {
  const ConvertedTrace out = convert_files({rank_trace()});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_LT(out.json_text.find("\"distributedInfo\""), out.json_text.find("\"traceEvents\""));
  EXPECT_LT(out.json_text.find("\"deviceProperties\""), out.json_text.find("\"traceEvents\""));
  EXPECT_EQ(out.document["schemaVersion"].as_int(), 1);
  const JsonValue& info = out.document["distributedInfo"];
  EXPECT_EQ(info["rank"].as_int(), 1);
  EXPECT_EQ(info["world_size"].as_int(), 2);
  EXPECT_EQ(info["backend"].str(), "nccl");

  const JsonValue& devices = out.document["deviceProperties"];
  ASSERT_EQ(devices.items.size(), 1u);
  const JsonValue& d = devices.items[0];
  EXPECT_EQ(d["id"].as_int(), 0);
  EXPECT_EQ(d["name"].str(), "H100-like");
  EXPECT_EQ(d["totalGlobalMem"].as_uint(), 80ull << 30);
  EXPECT_EQ(d["computeMajor"].as_int(), 9);
  EXPECT_EQ(d["computeMinor"].as_int(), 0);
  EXPECT_EQ(d["numSms"].as_int(), 132);
  EXPECT_EQ(d["maxThreadsPerMultiprocessor"].as_int(), 2048);
  EXPECT_EQ(d["regsPerBlock"].as_int(), 65536);
  EXPECT_EQ(d["regsPerMultiprocessor"].as_int(), 65536);
  EXPECT_EQ(d["warpSize"].as_int(), 32);
  EXPECT_EQ(d["sharedMemPerBlock"].as_int(), 48 * 1024);
  EXPECT_EQ(d["sharedMemPerMultiprocessor"].as_int(), 228 * 1024);
  EXPECT_EQ(d["sharedMemPerBlockOptin"].as_int(), 227 * 1024);
  EXPECT_FALSE(d.has("maxThreadsPerBlock")) << "DeviceInfo does not record it";

  std::string output;
  EXPECT_EQ(run_kineto_checker(out.json_path,
                               "--require-rank 1 --require-world-size 2 --require-backend nccl "
                               "--require-device-properties",
                               &output),
            0)
      << output;
}

TEST(KinetoJson, SeveralRanksInOneFileHaveNoDistributedInfoAndAGapInOrdinalsIsFilled) {
  TraceBuilder trace;
  for (int32_t rank = 0; rank < 2; ++rank) {
    ProcessSpec spec;
    spec.pid = 100 + static_cast<uint32_t>(rank);
    spec.rank = rank;
    spec.world_size = 2;
    spec.monotonic_ns = kStart;
    trace.process(0x10 + static_cast<uint64_t>(rank), spec);
  }
  DeviceSpec second = h100();
  second.ordinal = 2;  // the process saw ordinals 0..2 and described only 2
  trace.device(0x10, second);
  const ConvertedTrace out = convert_files({write_trace(trace, "two_ranks.trace")});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_FALSE(out.document.has("distributedInfo")) << "HTA reads one rank per file";
  const JsonValue& devices = out.document["deviceProperties"];
  ASSERT_EQ(devices.items.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(devices.items[i]["id"].as_uint(), i);
  EXPECT_FALSE(devices.items[0].has("name"));
  EXPECT_EQ(devices.items[2]["numSms"].as_int(), 132);
  std::string output;
  EXPECT_EQ(run_kineto_checker(out.json_path, "", &output), 0) << output;
}

}  // namespace
}  // namespace proflaunch::testing
