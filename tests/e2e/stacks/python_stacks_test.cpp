// Python frames, with no change to the program, on CPython 3.11:
//  - ctypes_ops.py (tests/simgpu/programs/python_ctypes) calls its extension
//    through ctypes.CDLL, which RELEASES the GIL around every foreign call -
//    as torch does inside its ops - so its frames are read without the GIL;
//  - gil_held.py calls through ctypes.PyDLL, which keeps the GIL held, from
//    a method and a nested function.
// Each CUDA call's stack must show the script's lines, merged with the
// native frames, root first and the API last.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "tests/e2e/cuda/support/traced_run.h"
#include "tests/e2e/stacks/support/stack_output.h"

namespace proflaunch::e2e {
namespace {

// The 1-based lines of `path` containing `text`, in order.
std::vector<int> lines_containing(const std::string& path, const std::string& text) {
  std::ifstream in(path);
  std::vector<int> lines;
  int number = 0;
  for (std::string line; std::getline(in, line);)
    if (++number, line.find(text) != std::string::npos) lines.push_back(number);
  return lines;
}

std::string python_frame(const std::string& script, int line, const std::string& function) {
  return script + ":" + std::to_string(line) + " " + function;
}

bool python_311_available(const std::string& python) {
  if (access(python.c_str(), X_OK) != 0) return false;
  RunOptions options;
  options.argv = {python, "-c", "import sys; print(sys.version_info[:2] == (3, 11))"};
  const ProcessResult version = testing::run_process(options);
  return version.exited_with(0) && version.out == "True\n";
}

TEST(PythonStacks, CtypesCallsWithoutTheGilShowTheirPythonLines) {
  const std::string python = build_path("SYSTEM_PYTHON3");
  if (!python_311_available(python)) GTEST_SKIP() << python << " is not CPython 3.11";
  const std::string script = build_path("CTYPES_OPS");
  TempDir dir;
  const ProcessResult run =
      testing::run_process(traced(dir / "x.trace", {python, script, build_path("SIMTENSOR_EXT")}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const ConvertedStacks stacks = convert_stacks(dir / "x.trace");
  ASSERT_TRUE(stacks.ok) << stacks.error;

  // The script's copies in order: upload, copy, download, download.
  std::vector<int> copy_lines;
  for (const char* call : {"ext.simtensor_upload(", "ext.simtensor_copy(", "ext.simtensor_download("})
    for (int line : lines_containing(script, call)) copy_lines.push_back(line);
  std::sort(copy_lines.begin(), copy_lines.end());
  const int module_line = lines_containing(script, "sys.exit(main())").at(0);

  const auto copies = stacks.named("cudaMemcpy");
  ASSERT_EQ(copies.size(), copy_lines.size());
  for (size_t i = 0; i < copies.size(); ++i) {
    std::string why;
    // Python frames first (the interpreter's own native frames replaced by
    // them), then the native frames of the call (ctypes, libffi, the
    // runtime), then the API.
    EXPECT_TRUE(contains_in_order(copies[i]->frames,
                                  {{python_frame(script, module_line, "<module>")},
                                   {python_frame(script, copy_lines[i], "main")},
                                   {"ffi_call"},
                                   {"cudaMemcpy"}},
                                  &why))
        << "copy " << i << ": " << why;
    EXPECT_EQ(copies[i]->frames.back(), "cudaMemcpy");
  }
  const auto sets = stacks.named("cudaMemset");
  ASSERT_EQ(sets.size(), 1u);
  std::string why;
  EXPECT_TRUE(contains_in_order(sets[0]->frames,
                                {{python_frame(script, lines_containing(script, "ext.simtensor_zero(").at(0), "main")}},
                                &why))
      << why;
  // A kernel launch, where the extension was built with nvcc.
  for (const SliceStack* launch : stacks.named("cudaLaunchKernel")) {
    EXPECT_TRUE(contains_in_order(launch->frames,
                                  {{python_frame(script, lines_containing(script, "ext.simtensor_fill(").at(0), "main")},
                                   {"cudaLaunchKernel"}},
                                  &why))
        << why;
  }
}

TEST(PythonStacks, CallsWithTheGilHeldShowMethodsAndNestedFunctions) {
  const std::string python = build_path("SYSTEM_PYTHON3");
  if (!python_311_available(python)) GTEST_SKIP() << python << " is not CPython 3.11";
  const std::string script = build_path("GIL_HELD_PY");
  TempDir dir;
  const ProcessResult run =
      testing::run_process(traced(dir / "x.trace", {python, script, build_path("SIMTENSOR_EXT")}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  ASSERT_EQ(run.out, "gil_held: ok\n");
  const ConvertedStacks stacks = convert_stacks(dir / "x.trace");
  ASSERT_TRUE(stacks.ok) << stacks.error;
  const auto sets = stacks.named("cudaMemset");
  ASSERT_EQ(sets.size(), 1u);
  std::string why;
  EXPECT_TRUE(contains_in_order(sets[0]->frames,
                                {{python_frame(script, site_line(script, "module"), "<module>")},
                                 {python_frame(script, site_line(script, "main_step"), "main")},
                                 {python_frame(script, site_line(script, "step"), "main.<locals>.step")},
                                 {python_frame(script, site_line(script, "forward"), "Model.forward")},
                                 {"cudaMemset"}},
                                &why))
      << why;
}

}  // namespace
}  // namespace proflaunch::e2e
