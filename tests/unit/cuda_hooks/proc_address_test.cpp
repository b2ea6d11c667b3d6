// cuGetProcAddress through the shim: proc_address_client (run under the
// real libproflaunch.so on the simulated driver) checks which function each
// ABI variant request is answered with and calls the wrappers; this test
// checks that those calls were recorded, once each, as what they were.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "formats/reader.h"
#include "tests/unit/preload/support/process_runner.h"

namespace proflaunch::testing {
namespace {

using namespace format;

struct Recorded {
  std::map<uint32_t, std::string> strings;
  std::map<uint16_t, uint32_t> api_names;
  std::map<uint64_t, uint32_t> function_names;
  std::vector<KernelLaunchRecord> launches;
  std::vector<MemoryCopyRecord> copies;

  std::string api(uint16_t id) const {
    auto found = api_names.find(id);
    return found == api_names.end() ? "" : strings.at(found->second);
  }
  std::string function(uint64_t handle) const {
    auto found = function_names.find(handle);
    return found == function_names.end() ? "" : strings.at(found->second);
  }
};

class Collector : public RecordVisitor {
 public:
  explicit Collector(Recorded& out) : out_(out) {}
  void on_record(const RecordView& record) override {
    switch (record.record_kind()) {
      case RecordKind::kStringDef:
        out_.strings[record.as<StringDefRecord>().id] = std::string(record.tail<StringDefRecord>());
        break;
      case RecordKind::kApiDef:
        out_.api_names[record.as<ApiDefRecord>().api] = record.as<ApiDefRecord>().name_string;
        break;
      case RecordKind::kFunctionDef:
        out_.function_names[record.as<FunctionDefRecord>().handle] = record.as<FunctionDefRecord>().name_string;
        break;
      case RecordKind::kKernelLaunch: out_.launches.push_back(record.as<KernelLaunchRecord>()); break;
      case RecordKind::kMemoryCopy: out_.copies.push_back(record.as<MemoryCopyRecord>()); break;
      default: break;
    }
  }

 private:
  Recorded& out_;
};

TEST(ProcAddress, WrappersHandedOutPerVariantWorkAndRecord) {
  TempDir dir;
  RunOptions options;
  options.argv = {required_env("PROC_ADDRESS_CLIENT"), required_env("PROBE_KERNEL_CUBIN")};
  options.unset_env = {"PROFLAUNCH_EXEC_PARENT", "PROFLAUNCH_TRACE", "PROFLAUNCH_GPU_TIMING"};
  options.set_env = {{"LD_PRELOAD", preload_list(required_env("LIBPROFLAUNCH"))},
                     {"PROFLAUNCH_PARTS_DIR", dir.path()},
                     {"LD_LIBRARY_PATH", required_env("SIMGPU_LIBRARY_PATH")}};
  const ProcessResult run = run_process(options);
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  ASSERT_EQ(run.out, "proc_address_client: ok\n");

  const auto parts = list_files(dir.path(), ".part");
  ASSERT_EQ(parts.size(), 1u);
  std::string error;
  auto reader = TraceReader::open_file(parts.front(), &error);
  ASSERT_NE(reader, nullptr) << error;
  Recorded recorded;
  Collector collector(recorded);
  reader->read(collector);

  ASSERT_EQ(recorded.copies.size(), 1u) << "the legacy cuMemcpyHtoD is never called; the _v2 wrapper once";
  EXPECT_EQ(recorded.api(recorded.copies[0].span.api), "cuMemcpyHtoD");
  EXPECT_EQ(recorded.copies[0].bytes, 1024 * sizeof(float));
  EXPECT_EQ(recorded.copies[0].span.result, 0);
  EXPECT_EQ(recorded.copies[0].direction, static_cast<uint8_t>(CopyDirection::kHostToDevice));

  ASSERT_EQ(recorded.launches.size(), 2u);
  for (const KernelLaunchRecord& launch : recorded.launches) {
    EXPECT_EQ(recorded.api(launch.span.api), "cuLaunchKernel");
    EXPECT_EQ(recorded.function(launch.function), "e2e_probe_kernel");
    EXPECT_EQ(launch.span.result, 0);
    EXPECT_EQ(launch.span.flags & kApiViaRuntime, 0);
    EXPECT_EQ(launch.grid.x, 4u);
  }
  // The legacy variant on the legacy stream, the per-thread one on the
  // calling thread's per-thread default stream.
  EXPECT_EQ(recorded.launches[0].span.flags & kApiPerThreadStream, 0);
  EXPECT_EQ(recorded.launches[0].stream, kStreamLegacy);
  EXPECT_NE(recorded.launches[1].span.flags & kApiPerThreadStream, 0);
  EXPECT_EQ(recorded.launches[1].stream, kStreamPerThread);
}

}  // namespace
}  // namespace proflaunch::testing
