// Python: an extension library loaded with ctypes.CDLL(..., RTLD_LOCAL), as
// torch loads its extension modules, calls the CUDA runtime from inside
// itself. Under proflaunch its copies, memset and kernel launch are all
// recorded with their names (the shim's wrappers must find the runtime
// even though RTLD_NEXT cannot see an RTLD_LOCAL library).
#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

using format::CopyDirection;

TEST(Python, CtypesExtensionLoadedLocallyIsTraced) {
  const std::string python = build_path("SYSTEM_PYTHON3");
  if (access(python.c_str(), X_OK) != 0) GTEST_SKIP() << python << " is not installed";
  TempDir dir;
  const ProcessResult run = testing::run_process(
      traced(dir / "x.trace", {python, build_path("CTYPES_OPS"), build_path("SIMTENSOR_EXT")}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  ASSERT_EQ(run.out, "ctypes_ops: ops=11 kernel=launched ok\n");

  const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  ASSERT_EQ(trace.images.size(), 1u) << describe(trace);
  const ProcessImage& image = trace.images.front();
  EXPECT_NE(image.command_line().find("ctypes_ops.py"), std::string::npos);

  // a.cuda(), b.copy_(a), b.cpu(), b.zero_(), b.cpu(), a.fill_(2.0).
  std::vector<CopyDirection> directions;
  for (const Operation* copy : image.copies()) {
    EXPECT_EQ(copy->api, "cudaMemcpy");
    EXPECT_EQ(copy->bytes, 4096u * sizeof(float));
    directions.push_back(static_cast<CopyDirection>(copy->copy.direction));
  }
  EXPECT_EQ(directions, (std::vector<CopyDirection>{CopyDirection::kHostToDevice, CopyDirection::kDeviceToDevice,
                                                    CopyDirection::kDeviceToHost, CopyDirection::kDeviceToHost}));
  ASSERT_EQ(image.sets().size(), 1u);
  EXPECT_EQ(image.sets().front()->api, "cudaMemset");
  ASSERT_EQ(image.launches().size(), 1u) << describe(trace);
  EXPECT_EQ(image.launches().front()->api, "cudaLaunchKernel");
  EXPECT_NE(demangle(image.launches().front()->kernel).find("simtensor::fill_kernel"), std::string::npos)
      << image.launches().front()->kernel;
  for (const Operation& op : image.operations) EXPECT_EQ(op.gpu.size(), 1u) << op.api;
}

}  // namespace
}  // namespace proflaunch::e2e
