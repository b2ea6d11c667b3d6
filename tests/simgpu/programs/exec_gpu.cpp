// A GPU program that runs another GPU program (gpu_child, found next to this
// executable) through exec.
//   --mode fork-exec (default): uses the GPU, forks, the child execs
//     gpu_child, the parent waits for it and uses the GPU again, like a
//     launcher script starting workers.
//   --mode replace: uses the GPU, then execs gpu_child in place of itself
//     (same pid, new image), like `exec python train.py` in a wrapper.
//
// usage: exec_gpu [--mode fork-exec|replace] [--launches L=4]
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "common/options.h"
#include "common/small_workload.h"

namespace {

std::string sibling_program(const char* name) {
  char self[PATH_MAX];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length <= 0) return name;
  std::string path(self, size_t(length));
  return path.substr(0, path.rfind('/') + 1) + name;
}

[[noreturn]] void exec_child(const std::string& child, const std::string& launches) {
  execl(child.c_str(), child.c_str(), "--launches", launches.c_str(), static_cast<char*>(nullptr));
  std::perror(("exec " + child).c_str());
  _exit(127);
}

}  // namespace

int main(int argc, char** argv) {
  const Options options(argc, argv, {"--mode", "--launches"});
  const std::string mode = options.text("--mode", "fork-exec");
  const int launches = int(options.integer("--launches", 4));
  if ((mode != "fork-exec" && mode != "replace") || launches < 0) {
    std::fprintf(stderr, "error: --mode must be fork-exec or replace, --launches >= 0\n");
    return 2;
  }
  const std::string child = sibling_program("gpu_child");
  const std::string child_launches = std::to_string(launches);

  if (!run_small_workload(launches)) return 1;
  std::printf("exec_gpu: parent before exec ok\n");
  std::fflush(stdout);
  if (mode == "replace") exec_child(child, child_launches);

  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    return 1;
  }
  // The child inherits an initialized CUDA context but only execs, which
  // is allowed: the new image starts without one.
  if (pid == 0) exec_child(child, child_launches);

  int status = 0;
  const bool child_ok =
      waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  const bool parent_ok = run_small_workload(launches);
  std::printf("exec_gpu: child=%s parent_after=%s\n", child_ok ? "ok" : "failed",
              parent_ok ? "ok" : "failed");
  return child_ok && parent_ok ? 0 : 1;
}
