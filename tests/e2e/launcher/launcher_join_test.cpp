// Joining: the file the user named holds every process of the run behind one
// header; a launcher killed mid-run leaves parts that --join assembles later;
// a damaged part is cut at its last good chunk, and says so.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "tests/e2e/launcher/launcher_run.h"

namespace proflaunch::testing {
namespace {

using format::kProcessAfterExec;
using format::kProcessForked;

TEST(LauncherJoin, OneFileWithOneHeaderAndEverySection) {
  TempDir dir;
  const std::string output = dir / "tree.trace";
  // fork, then exec in the parent: three sections, two pids.
  const ProcessResult result = run_process(launcher_options(
      {"-o", output}, {"/bin/sh", "-c",
                       probe_app_path() + " fork 200 && exec " + probe_app_path() + " exec 300"}));
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_FALSE(file_exists(output + ".parts")) << "parts are removed after joining";

  const TraceContents trace = load_file(output);
  ASSERT_TRUE(trace.all_clean()) << trace.problems();
  ASSERT_EQ(trace.reports.size(), 1u);
  EXPECT_EQ(trace.reports[0].embedded_file_headers, 0u) << "one header, not one per part";

  // sh records nothing (no section of its own). It spawns `probe_app fork`
  // (parent + forked child), then execs `probe_app exec`, an image after exec
  // of sh's pid, which execs itself once more: four sections, three pids.
  uint32_t forked = 0, after_exec = 0, ended = 0;
  for (const auto& [id, section] : trace.sections) {
    ASSERT_TRUE(section.process.has_value());
    forked += (section.process->flags & kProcessForked) ? 1 : 0;
    after_exec += (section.process->flags & kProcessAfterExec) ? 1 : 0;
    ended += section.end ? 1 : 0;
  }
  EXPECT_EQ(trace.sections.size(), 4u);
  EXPECT_EQ(forked, 1u);
#if defined(__SANITIZE_THREAD__)
  // sh starts `probe_app fork` with vfork + exec, which TSan's interceptor (in
  // sh too: the launcher preloads the runtime) turns into fork + exec: that
  // image is then one after exec of sh's forked child as well.
  EXPECT_EQ(after_exec, 3u);
#else
  EXPECT_EQ(after_exec, 2u);
#endif
  EXPECT_EQ(ended, 4u);
  EXPECT_EQ(trace.total_calls(), 200u * 3 + 300u * 2);
  EXPECT_NE(result.err.find("3 processes (4 images), 1200 events, 0 dropped"), std::string::npos)
      << result.err;
}

// The part files of a run whose launcher died: written by the shim directly.
void record_parts(const std::string& parts_dir, const std::vector<std::string>& args) {
  mkdir(parts_dir.c_str(), 0755);
  const ProcessResult result = run_process(traced_probe(parts_dir, args));
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
}

TEST(LauncherJoin, JoinAssemblesThePartsOfAKilledLauncher) {
  TempDir dir;
  const std::string output = dir / "killed.trace";
  RunningProcess launcher(launcher_options({"-o", output}, probe({"loop", "30"})));
  ASSERT_TRUE(launcher.wait_for_line("ready", 10000));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a flush or two
  launcher.send(SIGKILL);
  launcher.wait(/*until_output_closes=*/false);  // the orphaned program still holds the pipes

  // The program runs on, orphaned; its pid is in its part's name.
  const auto parts = list_files(output + ".parts", ".part");
  ASSERT_EQ(parts.size(), 1u);
  const std::string part_name = parts[0].substr(parts[0].rfind('/') + 1);
  const pid_t program = static_cast<pid_t>(std::stoi(part_name.substr(0, part_name.find('-'))));
  ASSERT_EQ(kill(program, SIGKILL), 0);
  for (int i = 0; i < 200 && kill(program, 0) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));

  // A new run with the same name is refused while the parts wait.
  const ProcessResult refused =
      run_process(launcher_options({"-o", output}, probe({"emit", "1"})));
  EXPECT_TRUE(refused.exited_with(1)) << refused.describe();
  EXPECT_NE(refused.err.find("--join"), std::string::npos);

  RunOptions join;
  join.argv = {launcher_path(), "--join", output};
  const ProcessResult joined = run_process(join);
  ASSERT_TRUE(joined.exited_with(0)) << joined.describe();
  EXPECT_NE(joined.err.find("1 process"), std::string::npos) << joined.err;
  EXPECT_NE(joined.err.find("1 ended abruptly"), std::string::npos) << joined.err;
  EXPECT_FALSE(file_exists(output + ".parts"));

  const TraceContents trace = load_file(output);
  ASSERT_TRUE(trace.all_clean()) << trace.problems();
  ASSERT_EQ(trace.sections.size(), 1u);
  const SectionContents& section = trace.sections.begin()->second;
  ASSERT_GE(section.calls.size(), 30u);
  for (size_t i = 0; i < section.calls.size(); ++i) ASSERT_EQ(section.calls[i].value(), i);
}

TEST(LauncherJoin, ACutPartIsCopiedUpToItsLastWholeChunk) {
  TempDir dir;
  const std::string output = dir / "cut.trace";
  const std::string parts_dir = output + ".parts";
  // Several chunks: 100000 records are several MiB before compression.
  record_parts(parts_dir, {"emit", "100000"});
  const auto parts = list_files(parts_dir, ".part");
  ASSERT_EQ(parts.size(), 1u);
  const TraceContents whole = load_trace(parts, nullptr);
  ASSERT_EQ(whole.total_calls(), 100000u);
  struct stat info {};
  ASSERT_EQ(stat(parts[0].c_str(), &info), 0);
  ASSERT_EQ(truncate(parts[0].c_str(), info.st_size - 100), 0);  // into the last chunk

  RunOptions join;
  join.argv = {launcher_path(), "--join", output};
  const ProcessResult joined = run_process(join);
  ASSERT_TRUE(joined.exited_with(0)) << joined.describe();
  EXPECT_NE(joined.err.find("truncated chunk"), std::string::npos) << joined.err;
  EXPECT_NE(joined.err.find("left out"), std::string::npos) << joined.err;

  const TraceContents trace = load_file(output);
  EXPECT_TRUE(trace.all_clean()) << "the cut chunk must not be copied: " << trace.problems();
  EXPECT_LT(trace.total_calls(), 100000u);
  EXPECT_GT(trace.total_calls(), 0u);
}

TEST(LauncherJoin, JoinRefusesToOverwriteAndNeedsParts) {
  TempDir dir;
  const std::string output = dir / "j.trace";
  RunOptions join;
  join.argv = {launcher_path(), "--join", output};
  const ProcessResult nothing = run_process(join);
  EXPECT_TRUE(nothing.exited_with(1));
  EXPECT_NE(nothing.err.find("nothing to join"), std::string::npos);

  record_parts(output + ".parts", {"emit", "10"});
  std::ofstream(output) << "old";
  const ProcessResult refused = run_process(join);
  EXPECT_TRUE(refused.exited_with(1));
  EXPECT_TRUE(file_exists(output + ".parts"));
  join.argv.push_back("--force");
  ASSERT_TRUE(run_process(join).exited_with(0));
  EXPECT_EQ(load_file(output).total_calls(), 10u);
}

}  // namespace
}  // namespace proflaunch::testing
