// Output names and where the launcher looks for the shim, without running
// anything.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "launcher/output_name.h"
#include "launcher/shim_locator.h"
#include "launcher/summary.h"

namespace proflaunch::launcher {
namespace {

std::set<std::string>* g_existing = nullptr;
bool fake_exists(const std::string& path) { return g_existing->count(path) > 0; }

TEST(OutputName, ExpandsEachPlaceholder) {
  setenv("PROFLAUNCH_TEST_RANK", "3", 1);
  EXPECT_EQ(expand_output_name("run-%p.trace", 4242).path, "run-4242.trace");
  EXPECT_EQ(expand_output_name("r%q{PROFLAUNCH_TEST_RANK}.trace", 1).path, "r3.trace");
  EXPECT_EQ(expand_output_name("100%%.trace", 1).path, "100%.trace");
  EXPECT_EQ(expand_output_name("plain.trace", 1).path, "plain.trace");
}

TEST(OutputName, CounterSkipsNamesWhoseFileOrPartsExist) {
  std::set<std::string> existing = {"r1.trace", "r2.trace.parts"};
  g_existing = &existing;
  EXPECT_EQ(expand_output_name("r%n.trace", 1, fake_exists).path, "r3.trace");
  existing.clear();
  EXPECT_EQ(expand_output_name("r%n.trace", 1, fake_exists).path, "r1.trace");
}

TEST(OutputName, ErrorsNameTheProblem) {
  unsetenv("PROFLAUNCH_TEST_UNSET");
  EXPECT_NE(expand_output_name("x%q{PROFLAUNCH_TEST_UNSET}", 1).error.find("is not set"),
            std::string::npos);
  EXPECT_NE(expand_output_name("x%y", 1).error.find("unknown placeholder %y"), std::string::npos);
  EXPECT_NE(expand_output_name("x%", 1).error.find("lone %"), std::string::npos);
  EXPECT_NE(expand_output_name("x%q", 1).error.find("%q needs a variable"), std::string::npos);
  // Found by the settings fuzzer: these used to give neither a path nor an error.
  EXPECT_NE(expand_output_name("", 1).error.find("--output is empty"), std::string::npos);
  EXPECT_TRUE(expand_output_name("", 1).path.empty());
  setenv("PROFLAUNCH_TEST_EMPTY", "", 1);
  EXPECT_NE(expand_output_name("%q{PROFLAUNCH_TEST_EMPTY}", 1).error.find("expands to an empty name"),
            std::string::npos);
  EXPECT_NE(expand_output_name("x%q{}", 1).error.find("names no variable"), std::string::npos);
}

TEST(ShimLocator, BuildAndInstallTreeCandidates) {
  EXPECT_EQ(build_tree_candidate("/b/launcher/proflaunch"), "/b/launcher/../preload/libproflaunch.so");
  const std::string install = install_tree_candidate("/usr/local/bin/proflaunch");
  EXPECT_EQ(install.rfind("/usr/local/bin/../", 0), 0u) << install;
  EXPECT_NE(install.find("/proflaunch/libproflaunch.so"), std::string::npos);
}

TEST(Summary, HumanBytes) {
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(1536), "1.5 KiB");
  EXPECT_EQ(human_bytes(5u << 20), "5.0 MiB");
}

}  // namespace
}  // namespace proflaunch::launcher
