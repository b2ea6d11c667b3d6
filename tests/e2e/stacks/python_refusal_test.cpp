// Interpreters whose frames the shim must not read: the program runs
// unchanged, its stacks are native only, and one stderr line says why.
//  - a CPython of a version without a layout (PYTHON_UNSUPPORTED: pyenv's
//    3.8, SKIP when absent), running the ctypes program;
//  - programs/fake_python.c, which exports CPython's C API symbols but whose
//    type objects give code (3.13, via Py_Version) or frame (3.10, via
//    Py_GetVersion) objects another size than the release layout - as a
//    free-threaded or Py_TRACE_REFS build would. The 3.10 one also counts
//    its Py_GetVersion() calls across a library loaded mid-run: one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "tests/e2e/cuda/support/traced_run.h"
#include "tests/e2e/stacks/support/stack_output.h"

namespace proflaunch::e2e {
namespace {

// The lines of `err` that mention Python frames.
std::vector<std::string> python_lines(const std::string& err) {
  std::vector<std::string> said;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);)
    if (line.find("Python frames") != std::string::npos) said.push_back(line);
  return said;
}

// Every stack of `api` is native only, and reaches the API.
void expect_native_only(const ConvertedStacks& stacks, const std::string& api, const std::string& caller) {
  const auto slices = stacks.named(api);
  ASSERT_FALSE(slices.empty()) << api;
  for (const SliceStack* slice : slices) {
    std::string why;
    EXPECT_TRUE(contains_in_order(slice->frames, {{caller}, {api}}, &why)) << why << "\n" << joined(slice->frames);
    for (const std::string& frame : slice->frames)
      EXPECT_EQ(frame.find(".py:"), std::string::npos) << joined(slice->frames);
    EXPECT_EQ(slice->frames.back(), api);
  }
}

TEST(RefusedPython, AVersionWithoutALayoutGetsNativeFramesAndOneLine) {
  const char* python = std::getenv("PYTHON_UNSUPPORTED");
  if (python == nullptr || access(python, X_OK) != 0)
    GTEST_SKIP() << "no unsupported CPython: PYTHON_UNSUPPORTED=" << (python ? python : "(unset)");
  const std::string script = build_path("CTYPES_OPS");
  TempDir dir;
  const ProcessResult untraced_run = testing::run_process(untraced({python, script, build_path("SIMTENSOR_EXT")}));
  const ProcessResult run =
      testing::run_process(traced(dir / "x.trace", {python, script, build_path("SIMTENSOR_EXT")}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(run.out, untraced_run.out);
  const auto said = python_lines(run.err);
  ASSERT_EQ(said.size(), 1u) << run.err;
  EXPECT_NE(said[0].find("Python 3.8: Python frames are recorded for CPython 3.9 to 3.13"), std::string::npos)
      << said[0];
  const ConvertedStacks stacks = convert_stacks(dir / "x.trace");
  ASSERT_TRUE(stacks.ok) << stacks.error;
  expect_native_only(stacks, "cudaMemcpy", "ffi_call");
}

TEST(RefusedPython, ABuildWhoseCodeObjectsDifferIsNotRead) {
  TempDir dir;
  const ProcessResult run = testing::run_process(
      traced(dir / "x.trace", {build_path("FAKE_PYTHON_NEW"), build_path("PYTHON_CALLBACK_LIB")}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(run.out, "fake_python: ok\n");
  const auto said = python_lines(run.err);
  ASSERT_EQ(said.size(), 1u) << run.err;
  EXPECT_NE(said[0].find("Python 3.13: code objects of 999 bytes, not 200: not a default build"), std::string::npos)
      << said[0];
  const ConvertedStacks stacks = convert_stacks(dir / "x.trace");
  ASSERT_TRUE(stacks.ok) << stacks.error;
  expect_native_only(stacks, "cudaMemset", "main");
}

TEST(RefusedPython, BeforePyVersionTheVersionStringIsAskedOnce) {
  TempDir dir;
  const ProcessResult run = testing::run_process(
      traced(dir / "x.trace", {build_path("FAKE_PYTHON_OLD"), build_path("PYTHON_CALLBACK_LIB")}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  // Asked at start; not again when the library loaded mid-run made the shim
  // look for the interpreter again.
  EXPECT_EQ(run.out, "fake_python: ok, Py_GetVersion called 1 time(s)\n");
  const auto said = python_lines(run.err);
  ASSERT_EQ(said.size(), 1u) << run.err;
  EXPECT_NE(said[0].find("Python 3.10: frame objects of 1 bytes, not 360: not a default build"), std::string::npos)
      << said[0];
  const ConvertedStacks stacks = convert_stacks(dir / "x.trace");
  ASSERT_TRUE(stacks.ok) << stacks.error;
  expect_native_only(stacks, "cudaMemset", "main");
}

}  // namespace
}  // namespace proflaunch::e2e
