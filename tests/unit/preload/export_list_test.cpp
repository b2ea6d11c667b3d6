// The injected libraries export exactly their hooks: no zstd, no C++ runtime,
// no libunwind `backtrace`, nothing of the core. A stray export would
// interpose on the program (or be interposed) behind everyone's back.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>

#include "tests/unit/preload/support/process_runner.h"

namespace proflaunch::testing {
namespace {

const std::set<std::string> kProcessHooks = {
    "execve", "execv",       "execvp",      "execvpe", "execl",
    "execlp", "execle",      "posix_spawn", "posix_spawnp",
    "_exit",  "_Exit",       "exit",        "pthread_setname_np",
};
// CPU sampling (preload/sampling): arm new threads, hide the signal. Only in
// libproflaunch.so (with the stacks), not in the probe shim.
const std::set<std::string> kSamplingHooks = {"pthread_create", "sigaction", "signal", "sigset"};

std::set<std::string> defined_symbols(const std::string& library, const std::string& nm_options) {
  std::set<std::string> names;
  const std::string command = "nm " + nm_options + " --defined-only '" + library + "'";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return names;
  char line[4096];
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    std::string text(line);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    const size_t space = text.rfind(' ');
    names.insert(space == std::string::npos ? text : text.substr(space + 1));
  }
  EXPECT_EQ(pclose(pipe), 0) << command;
  return names;
}

std::set<std::string> defined_dynamic_symbols(const std::string& library) { return defined_symbols(library, "-D"); }

bool is_cuda_hook_name(const std::string& name) {
  return name.rfind("cu", 0) == 0 || name.rfind("__cuda", 0) == 0 || name.rfind("nccl", 0) == 0;
}

// The HIP hooks (preload/hip): hip*, __hip*, and the four functions
// libamdhip64 5.2 exports with C++ linkage (_Z..hip...).
bool is_hip_hook_name(const std::string& name) {
  return name.rfind("hip", 0) == 0 || name.rfind("__hip", 0) == 0 ||
         (name.rfind("_Z", 0) == 0 && name.find("hip") != std::string::npos);
}

// libproflaunch.so: the process hooks, the dlsym interposer and the CUDA and
// HIP hooks (whose exact lists are checked against the hook table in
// tests/unit/cuda_hooks).
TEST(ExportList, LibproflaunchExportsExactlyItsHooks) {
  std::set<std::string> others;
  size_t cuda_hooks = 0;
  for (const std::string& name : defined_dynamic_symbols(required_env("PROFLAUNCH_SHIM"))) {
    if (is_cuda_hook_name(name)) ++cuda_hooks;
    else if (!is_hip_hook_name(name)) others.insert(name);
  }
  std::set<std::string> expected = kProcessHooks;
  expected.insert({"dlsym", "dlvsym", "dlopen", "dlclose"});
  expected.insert(kSamplingHooks.begin(), kSamplingHooks.end());
  expected.insert("InitializeInjection");  // a real driver's injection entry point (preload/cuda/cupti)
  expected.insert("InitializeInjectionNvtx2");  // each NVTX module's (preload/nvtx)
  // Where threads wait (preload/osrt/osrt_calls.h; syscall for the futex system call).
  expected.insert({"pthread_mutex_lock", "pthread_cond_wait", "pthread_cond_timedwait", "pthread_cond_clockwait",
                   "sem_wait", "sem_timedwait", "sem_clockwait", "pthread_join", "poll", "ppoll", "select", "pselect",
                   "epoll_wait", "epoll_pwait", "read", "recv", "recvfrom", "recvmsg", "accept", "accept4",
                   "nanosleep", "clock_nanosleep", "usleep", "sleep", "waitpid", "wait", "wait4", "syscall",
                   "__read_chk", "__recv_chk", "__recvfrom_chk", "__poll_chk", "__ppoll_chk"});
  EXPECT_EQ(others, expected);
  EXPECT_GT(cuda_hooks, 0u);
}

TEST(ExportList, TheProbeShimAddsOnlyItsProbeHook) {
  std::set<std::string> expected = kProcessHooks;
  expected.insert("probe_event");
  EXPECT_EQ(defined_dynamic_symbols(required_env("PROBE_SHIM")), expected);
}

TEST(ExportList, NoUndefinedReferenceCanBindToTheProgramsZstd) {
  // Weak undefined ZSTD_trace_* hooks in libzstd.a would bind to a program's
  // definitions at run time; the shim defines them privately.
  const std::string command = "nm -D '" + required_env("PROFLAUNCH_SHIM") + "'";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char line[4096];
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    const std::string text(line);
    EXPECT_EQ(text.find("ZSTD"), std::string::npos) << text;
    EXPECT_EQ(text.find(" backtrace"), std::string::npos) << text;
  }
  pclose(pipe);
}

// No dynamic initializers (preload/lazy_global.h): the shim's constructor
// may start the writer thread before the loader runs the library's other
// initializers, which would then build globals the writer already uses.
// GCC names each translation unit's initializer _GLOBAL__sub_I_<file>.
TEST(LibraryImage, LibproflaunchHasNoDynamicInitializers) {
  const std::set<std::string> symbols = defined_symbols(required_env("PROFLAUNCH_SHIM"), "");
  ASSERT_GT(symbols.size(), 100u) << "no symbol table to check";
  std::string initializers;
  for (const std::string& name : symbols)
    if (name.rfind("_GLOBAL__sub_I_", 0) == 0) initializers += " " + name;
  EXPECT_EQ(initializers, "") << "globals built at load time (make them constinit or a LazyGlobal)";
}

}  // namespace
}  // namespace proflaunch::testing
