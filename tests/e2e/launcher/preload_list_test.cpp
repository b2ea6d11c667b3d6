// The LD_PRELOAD list the launcher gives the program: sanitizer runtimes
// first (ASan/TSan die unless they load first), then the shim, then the
// user's own entries in order.
#include "launcher/preload_list.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

namespace proflaunch::launcher {
namespace {

bool has_first_only_runtime(const std::vector<std::string>& libraries) {
  return std::any_of(libraries.begin(), libraries.end(), is_first_only_runtime);
}

TEST(PreloadList, TheShimGoesFirstAndTheUsersEntriesFollowInOrder) {
  EXPECT_EQ(preload_value("/p/libproflaunch.so", "", {}), "/p/libproflaunch.so");
  EXPECT_EQ(preload_value("/p/libproflaunch.so", "/a/liba.so:libb.so /c/libc.so", {}),
            "/p/libproflaunch.so:/a/liba.so:libb.so:/c/libc.so");
  EXPECT_EQ(preload_value("/p/libproflaunch.so", "::/a/liba.so:", {}), "/p/libproflaunch.so:/a/liba.so");
}

TEST(PreloadList, AListThatAlreadyNamesTheShimIsKeptAsItIs) {
  EXPECT_EQ(preload_value("/p/libproflaunch.so", "/a/liba.so:/p/libproflaunch.so", {"libasan.so.8"}),
            "/a/liba.so:/p/libproflaunch.so");
}

TEST(PreloadList, SanitizerRuntimesGoAheadOfTheShimOnceEach) {
  EXPECT_EQ(preload_value("/p/libproflaunch.so", "", {"libasan.so.8"}), "libasan.so.8:/p/libproflaunch.so");
  // The user's own runtime entry moves ahead of the shim and is not doubled.
  EXPECT_EQ(preload_value("/p/libproflaunch.so", "/a/liba.so:/usr/lib/x86_64-linux-gnu/libasan.so.8",
                          {"libasan.so.8"}),
            "/usr/lib/x86_64-linux-gnu/libasan.so.8:/p/libproflaunch.so:/a/liba.so");
  EXPECT_EQ(preload_value("/p/libproflaunch.so", "/a/libtsan.so.2", {"libasan.so.8"}),
            "/a/libtsan.so.2:libasan.so.8:/p/libproflaunch.so");
}

TEST(PreloadList, OnlyRuntimesThatMustLoadFirstAreMoved) {
  for (const char* name : {"libasan.so.8", "/usr/lib/x86_64-linux-gnu/libtsan.so.2", "libhwasan.so",
                           "libclang_rt.asan-x86_64.so", "libclang_rt.tsan-x86_64.so"})
    EXPECT_TRUE(is_first_only_runtime(name)) << name;
  for (const char* name : {"libubsan.so.1", "libc.so.6", "/opt/libasanity.so", "/lib/libasan.so.8/../libfoo.so",
                           "libmyasan.so"})
    EXPECT_FALSE(is_first_only_runtime(name)) << name;
}

TEST(PreloadList, ProgramsAreFoundAsExecvpFindsThem) {
  char dir_template[] = "/tmp/preload-list-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string tool = dir + "/tool";
  std::ofstream(tool) << "#!/bin/sh\n";
  const std::string plain = dir + "/plain";
  std::ofstream(plain) << "not executable\n";
  ASSERT_EQ(chmod(tool.c_str(), 0755), 0);
  EXPECT_EQ(resolve_program("tool", "/nonexistent:" + dir), tool);
  EXPECT_EQ(resolve_program("plain", dir), "");  // not executable: skipped
  EXPECT_EQ(resolve_program("missing", dir), "");
  EXPECT_EQ(resolve_program("./relative/x", dir), "./relative/x");
  EXPECT_EQ(resolve_program("sh", ""), "/bin/sh");  // execvp's default path
  unlink(tool.c_str());
  unlink(plain.c_str());
  rmdir(dir.c_str());
}

TEST(PreloadList, TheNeededLibrariesAreReadFromTheElfFile) {
  const std::vector<std::string> shell = needed_libraries("/bin/sh");
  EXPECT_NE(std::find(shell.begin(), shell.end(), "libc.so.6"), shell.end());
  EXPECT_FALSE(has_first_only_runtime(shell));
  EXPECT_TRUE(needed_libraries("/etc/passwd").empty());
  EXPECT_TRUE(needed_libraries("/nonexistent").empty());

  const char* asan_app = std::getenv("PROBE_APP_ADDRESS");
  const char* tsan_app = std::getenv("PROBE_APP_THREAD");
  if (asan_app == nullptr || tsan_app == nullptr) GTEST_SKIP() << "a sanitized build: no separately instrumented app";
  const std::vector<std::string> asan = first_only_runtimes("/bin/sh", asan_app);
  ASSERT_EQ(asan.size(), 1u);
  EXPECT_EQ(asan[0].rfind("libasan.so", 0), 0u) << asan[0];
  const std::vector<std::string> tsan = first_only_runtimes(tsan_app, "/bin/sh");
  ASSERT_EQ(tsan.size(), 1u);
  EXPECT_EQ(tsan[0].rfind("libtsan.so", 0), 0u) << tsan[0];
  EXPECT_EQ(first_only_runtimes(asan_app, asan_app).size(), 1u);
}

}  // namespace
TEST(PreloadList, ATSanProgramMayStartThreadsAfterAForkUnlessTheUserSaidOtherwise) {
  const std::vector<std::string> tsan = {"libtsan.so.2"};
  EXPECT_EQ(tsan_options_value(nullptr, tsan), "die_after_fork=0");
  EXPECT_EQ(tsan_options_value("halt_on_error=1", tsan), "halt_on_error=1:die_after_fork=0");
  EXPECT_EQ(tsan_options_value("die_after_fork=1", tsan), "") << "the user's choice is kept";
  EXPECT_EQ(tsan_options_value(nullptr, {"libclang_rt.tsan-x86_64.so"}), "die_after_fork=0");
  EXPECT_EQ(tsan_options_value(nullptr, {"libasan.so.8"}), "") << "only TSan has the rule";
  EXPECT_EQ(tsan_options_value("halt_on_error=1", {}), "");
}

}  // namespace proflaunch::launcher
