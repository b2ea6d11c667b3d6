// What the CPU was doing (issue 38), answered on real programs under the
// real launcher and shim with sampling and the OS runtime hooks at their
// defaults:
//  - slow_loader.py (tests/simgpu/programs/python_ctypes): a Python training
//    loop whose loader thread sleeps 6 ms (its "read") and decodes for 4 ms
//    of CPU per batch while the main thread waits in queue.Queue.get; the
//    GPU is idle most of each step. The gpu-idle-gap rule must say the
//    launching thread was blocked in Queue.get at the program's line, and
//    what the loader ran; `stats --section cpu --during gpu-idle` must put
//    the loader's samples in decode_batch and its waits in read_batch, in
//    the shares the program sets.
//  - Debian's real PyTorch (python3-torch, CPU build): a training step runs
//    unchanged, and the samples land in torch's own Python files and in
//    libtorch's native code.
#include <gtest/gtest.h>

#include <cstdlib>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <regex>
#include <string>
#include <vector>

#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

#define SKIP_IF_SANITIZED() \
  if (sanitized_run()) GTEST_SKIP() << "sanitized programs are not sampled (sanitized_run)"


std::string line_of(const std::string& path, const std::string& text) {
  std::ifstream in(path);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find(text) != std::string::npos) return std::to_string(n);
  return "?";
}

double number_after(const std::string& text, const std::regex& pattern) {
  std::smatch m;
  return std::regex_search(text, m, pattern) ? std::stod(m[1].str()) : -1;
}

TEST(SlowLoader, TheIdleGapRuleNamesWhatTheLaunchingThreadAndTheLoaderDid) {
  SKIP_IF_SANITIZED();
  const std::string python = build_path("SYSTEM_PYTHON3");
  if (access(python.c_str(), X_OK) != 0) GTEST_SKIP() << python << " is not installed";
  TempDir dir;
  const std::string script = build_path("SLOW_LOADER");
  const std::vector<std::string> program = {python, script, build_path("SIMTENSOR_EXT"), "--steps", "30",
                                            "--read-ms", "6", "--decode-ms", "4"};
  const ProcessResult untraced_run = testing::run_process(untraced(program));
  if (untraced_run.exited_with(77)) GTEST_SKIP() << "libsimtensor_ext was built without nvcc (no kernel)";
  const std::string trace = dir.path() + "/loader.trace";
  const ProcessResult run = testing::run_process(traced(trace, program));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(run.out, untraced_run.out);

  const ProcessResult rules = run_proftrace({"stats", trace, "--section", "recommendations"});
  ASSERT_TRUE(rules.exited_with(0)) << rules.describe();
  const std::string get_line = line_of(script, "batch = batches.get()");
  // The launching thread: blocked in Queue.get, at the program's own line
  // (not in threading.py), for most of each gap.
  const std::string blocked = "blocked in sem_wait (semaphore) in Queue.get at slow_loader.py:" + get_line;
  EXPECT_NE(rules.out.find(blocked), std::string::npos) << rules.out;
  const double share = number_after(
      rules.out, std::regex("the launching thread spent [0-9.]+ ms \\(([0-9.]+)%\\) blocked in sem_wait"));
  EXPECT_GE(share, 80.0) << rules.out;
  // The loader: its decode, from samples.
  EXPECT_TRUE(std::regex_search(rules.out, std::regex("ran [0-9.]+ ms \\([0-9.]+%\\) in decode_batch at slow_loader.py:")))
      << rules.out;

  // The loader's share of its own time in the gaps: decode (samples) against
  // read (its sleep, a blocking call), as the program sets them: 4 ms of CPU
  // against 6 ms asleep per batch.
  const ProcessResult cpu = run_proftrace({"stats", trace, "--section", "cpu", "--during", "gpu-idle", "--csv"});
  ASSERT_TRUE(cpu.exited_with(0)) << cpu.describe();
  double decode_ns = 0, read_ns = 0;
  std::string loader_tid;
  std::istringstream lines(cpu.out);
  for (std::string line; std::getline(lines, line);) {
    // Python lines: "pid,tid,thread,line,self,self %,self CPU (ns),..."
    if (line.find("decode_batch") != std::string::npos && line.find("slow_loader.py:") != std::string::npos &&
        line.find("(slow_loader.py)") == std::string::npos) {
      std::vector<std::string> cells;
      std::stringstream row(line);
      for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
      if (cells.size() >= 7) decode_ns += std::stod(cells[6]), loader_tid = cells[1];
    }
    if (line.find("clock_nanosleep in read_batch at slow_loader.py:") != std::string::npos) {
      std::vector<std::string> cells;
      std::stringstream row(line);
      for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
      if (cells.size() >= 6) read_ns = std::stod(cells[5]);
    }
  }
  ASSERT_GT(decode_ns, 0) << cpu.out;
  ASSERT_GT(read_ns, 0) << cpu.out;
  const double decode_share = decode_ns / (decode_ns + read_ns);
  EXPECT_NEAR(decode_share, 0.4, 0.15) << "decode " << decode_ns << " ns, read " << read_ns << " ns\n" << cpu.out;
  RecordProperty("loader_decode_share", std::to_string(decode_share));
}

TEST(RealPyTorch, ATrainingStepRunsUnchangedAndIsSampledInTorchsOwnCode) {
  SKIP_IF_SANITIZED();
  const std::string python = build_path("SYSTEM_PYTHON3");
  if (access(python.c_str(), X_OK) != 0) GTEST_SKIP() << python << " is not installed";
  if (testing::run_process(untraced({python, "-c", "import torch"})).status != 0)
    GTEST_SKIP() << "Debian's python3-torch is not installed (scripts/install-deps.sh installs it)";
  TempDir dir;
  const std::vector<std::string> program = {python, build_path("TORCH_STEP")};
  const ProcessResult untraced_run = testing::run_process(untraced(program));
  ASSERT_TRUE(untraced_run.exited_with(0)) << untraced_run.describe();
  const std::string trace = dir.path() + "/torch.trace";
  const ProcessResult run = testing::run_process(traced(trace, program));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(run.out, untraced_run.out) << "the same loss, untraced and traced";

  const ProcessResult cpu = run_proftrace({"stats", trace, "--section", "cpu", "--top", "200", "--csv"});
  ASSERT_TRUE(cpu.exited_with(0)) << cpu.describe();
  // Python: torch's own files (its modules and optimizers); native: libtorch.
  EXPECT_NE(cpu.out.find("/torch/"), std::string::npos) << cpu.out;
  EXPECT_TRUE(std::regex_search(cpu.out, std::regex("/torch/(nn|optim|autograd)/[a-z_/]+\\.py:[0-9]+"))) << cpu.out;
  EXPECT_NE(cpu.out.find("libtorch"), std::string::npos) << cpu.out;
}

}  // namespace
}  // namespace proflaunch::e2e
