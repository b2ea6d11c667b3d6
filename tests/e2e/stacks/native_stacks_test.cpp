// Native call stacks end to end: stack_chains calls the CUDA runtime through
// level_one -> level_two -> a dlopen'ed library (a static function, and a
// function inlined into an exported one). The converted trace must name
// every frame with its function and the exact line (from the -g builds),
// degrade to ELF symbol names and then module+offset without debug
// information, and keep its names when the library is gone after the run
// (the launcher's embedded symbol table).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "tests/e2e/cuda/support/traced_run.h"
#include "tests/e2e/stacks/support/stack_output.h"

namespace proflaunch::e2e {
namespace {

std::string program() { return build_path("STACK_CHAINS"); }
std::string program_source() { return build_path("STACK_CHAINS_SOURCE"); }
std::string library_source() { return build_path("STACK_CHAIN_LIB_SOURCE"); }

ProcessResult run_traced(const std::string& trace, const std::string& library,
                         const std::vector<std::string>& launcher_args = {},
                         const std::vector<std::string>& program_args = {}) {
  std::vector<std::string> command = {program(), "--library", library};
  command.insert(command.end(), program_args.begin(), program_args.end());
  return testing::run_process(traced(trace, command, launcher_args));
}

const SliceStack& only(const ConvertedStacks& stacks, const std::string& api) {
  const auto found = stacks.named(api);
  EXPECT_EQ(found.size(), 1u) << api;
  static const SliceStack none;
  return found.empty() ? none : *found.front();
}

TEST(NativeStacks, KnownCallChainsHaveTheirNamesAndLines) {
  TempDir dir;
  const ProcessResult run = run_traced(dir / "x.trace", build_path("STACK_CHAIN_LIB"));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const ConvertedStacks stacks = convert_stacks(dir / "x.trace");
  ASSERT_TRUE(stacks.ok) << stacks.error;
  const std::string p = program_source(), l = library_source();
  std::string why;

  const SliceStack& copy = only(stacks, "cudaMemcpy");
  EXPECT_TRUE(contains_in_order(copy.frames,
                                {{"main", native_line(p, "main_call")},
                                 {"level_one", native_line(p, "level_one_call")},
                                 {"level_two", native_line(p, "level_two_copy")},
                                 {"chain_copy", native_line(l, "chain_copy_call")},
                                 {"copy_in_static_function", native_line(l, "static_copy")}},
                                &why))
      << why;
  ASSERT_FALSE(copy.frames.empty());
  EXPECT_EQ(copy.frames.back(), "cudaMemcpy") << "the leaf is the API, last";

  // inlined_set is inlined into chain_set: both frames, from one address.
  const SliceStack& set = only(stacks, "cudaMemset");
  EXPECT_TRUE(contains_in_order(set.frames,
                                {{"level_two", native_line(p, "level_two_set")},
                                 {"chain_set", native_line(l, "chain_set_call")},
                                 {"inlined_set", native_line(l, "inlined_set"), "[inlined]"}},
                                &why))
      << why;

  const SliceStack& sync = only(stacks, "cudaDeviceSynchronize");
  EXPECT_TRUE(contains_in_order(sync.frames, {{"main", native_line(p, "main_sync")}}, &why)) << why;
  EXPECT_EQ(sync.frames.back(), "cudaDeviceSynchronize");

  const auto counts = record_counts(dir / "x.trace");
  EXPECT_GT(counts.count("SymbolDef") ? counts.at("SymbolDef") : 0, 0u) << "no embedded symbol table";
}

TEST(NativeStacks, TheEmbeddedSymbolTableKeepsNamesWhenTheLibraryIsGone) {
  TempDir dir;
  const std::string copy = dir / "libstack_chain_copy.so";
  std::filesystem::copy_file(build_path("STACK_CHAIN_LIB"), copy);
  ASSERT_TRUE(run_traced(dir / "with.trace", copy).exited_with(0));
  ASSERT_TRUE(run_traced(dir / "without.trace", copy, {"--no-symbols"}).exited_with(0));
  ASSERT_EQ(unlink(copy.c_str()), 0);  // as if converted on another machine

  const std::string l = library_source();
  std::string why;
  const ConvertedStacks with = convert_stacks(dir / "with.trace");
  ASSERT_TRUE(with.ok) << with.error;
  EXPECT_TRUE(contains_in_order(only(with, "cudaMemcpy").frames,
                                {{"chain_copy", native_line(l, "chain_copy_call")},
                                 {"copy_in_static_function", native_line(l, "static_copy")}},
                                &why))
      << why;

  // Without the table the names of the missing file are gone: module+offset,
  // and a note that says which file could not be read.
  const auto counts = record_counts(dir / "without.trace");
  EXPECT_EQ(counts.count("SymbolDef"), 0u);
  const ConvertedStacks without = convert_stacks(dir / "without.trace");
  ASSERT_TRUE(without.ok) << without.error;
  const SliceStack& bare = only(without, "cudaMemcpy");
  EXPECT_TRUE(contains_in_order(bare.frames, {{"libstack_chain_copy.so+0x"}, {"libstack_chain_copy.so+0x"}}, &why))
      << why;
  for (const std::string& frame : bare.frames) EXPECT_EQ(frame.find("copy_in_static_function"), std::string::npos);
  EXPECT_NE(without.proftrace_stderr.find("libstack_chain_copy.so"), std::string::npos) << without.proftrace_stderr;
}

TEST(NativeStacks, WithoutDebugInformationTheElfSymbolTableNamesFunctions) {
  TempDir dir;
  ASSERT_TRUE(run_traced(dir / "x.trace", build_path("STACK_CHAIN_LIB_NODEBUG")).exited_with(0));
  const ConvertedStacks stacks = convert_stacks(dir / "x.trace");
  ASSERT_TRUE(stacks.ok) << stacks.error;
  std::string why;
  // The program still has its lines; the library has names (even of its
  // static function, from .symtab) but no lines.
  EXPECT_TRUE(contains_in_order(only(stacks, "cudaMemcpy").frames,
                                {{"level_two", native_line(program_source(), "level_two_copy")},
                                 {"chain_copy", "libstack_chain_lib_nodebug.so+0x"},
                                 {"copy_in_static_function", "libstack_chain_lib_nodebug.so+0x"}},
                                &why))
      << why;
}

TEST(NativeStacks, AStrippedLibraryShowsModuleAndOffset) {
  TempDir dir;
  ASSERT_TRUE(run_traced(dir / "x.trace", build_path("STACK_CHAIN_LIB_STRIPPED")).exited_with(0));
  const ConvertedStacks stacks = convert_stacks(dir / "x.trace");
  ASSERT_TRUE(stacks.ok) << stacks.error;
  const SliceStack& copy = only(stacks, "cudaMemcpy");
  std::string why;
  // Exported functions keep their .dynsym names; the static one is an offset.
  EXPECT_TRUE(contains_in_order(copy.frames,
                                {{"level_two", native_line(program_source(), "level_two_copy")},
                                 {"chain_copy (libstack_chain_lib_stripped.so+0x"},
                                 {"libstack_chain_lib_stripped.so+0x"}},
                                &why))
      << why;
  for (const std::string& frame : copy.frames) EXPECT_EQ(frame.find("copy_in_static_function"), std::string::npos);
}

TEST(NativeStacks, TheStacksOptionChoosesWhereStacksAreTaken) {
  TempDir dir;
  const std::string library = build_path("STACK_CHAIN_LIB");
  ASSERT_TRUE(run_traced(dir / "none.trace", library, {"--stacks=none"}).exited_with(0));
  ASSERT_TRUE(run_traced(dir / "sync.trace", library, {"--stacks=sync"}).exited_with(0));
  const auto none = record_counts(dir / "none.trace");
  EXPECT_EQ(none.count("CallStack"), 0u);
  EXPECT_EQ(none.count("NativeStackDef"), 0u);

  const ConvertedStacks sync = convert_stacks(dir / "sync.trace");
  ASSERT_TRUE(sync.ok) << sync.error;
  EXPECT_TRUE(only(sync, "cudaMemcpy").frames.empty());
  EXPECT_TRUE(only(sync, "cudaMemset").frames.empty());
  EXPECT_FALSE(only(sync, "cudaDeviceSynchronize").frames.empty());
}

TEST(NativeStacks, StatsListCallSitesByTheGpuTimeTheyLaunched) {
  TempDir dir;
  ASSERT_TRUE(run_traced(dir / "x.trace", build_path("STACK_CHAIN_LIB"), {}, {"--repeat", "5"}).exited_with(0));
  const ProcessResult stats = run_proftrace({"stats", "--section", "call-sites", "--csv", dir / "x.trace"});
  ASSERT_TRUE(stats.exited_with(0)) << stats.describe();
  // One row per site: the copy and the memset, each 5 operations.
  int copy_rows = 0, set_rows = 0;
  std::istringstream lines(stats.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("copy_in_static_function") != std::string::npos) {
      ++copy_rows;
      EXPECT_NE(line.find(",5,"), std::string::npos) << line;
    }
    if (line.find("inlined_set") != std::string::npos) {
      ++set_rows;
      EXPECT_NE(line.find(",5,"), std::string::npos) << line;
    }
  }
  EXPECT_EQ(copy_rows, 1) << stats.out;
  EXPECT_EQ(set_rows, 1) << stats.out;
}

}  // namespace
}  // namespace proflaunch::e2e
