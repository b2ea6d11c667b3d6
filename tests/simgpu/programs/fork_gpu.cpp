// Forked workers that use the GPU. The parent does not touch CUDA before
// forking (CUDA does not survive fork: a child may only use the GPU if its
// parent had not initialized it), each child initializes CUDA itself, runs
// a workload and exits; then the parent uses the GPU too. This is the
// pattern of multiprocessing-based launchers and GPU-using DataLoader
// workers.
//
// Children end with exit() by default. --child-exit=_exit ends them with
// _exit(), skipping atexit handlers and static destructors, which is what
// Python's multiprocessing does in its forked children.
//
// usage: fork_gpu [--children N=2] [--launches L=8] [--child-exit exit|_exit]
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/options.h"
#include "common/small_workload.h"

int main(int argc, char** argv) {
  const Options options(argc, argv);
  const int children = int(options.integer("--children", 2));
  const int launches = int(options.integer("--launches", 8));
  const std::string child_exit = options.text("--child-exit", "exit");
  if (children < 0 || launches < 0 || (child_exit != "exit" && child_exit != "_exit")) {
    std::fprintf(stderr,
                 "error: --children/--launches must not be negative, "
                 "--child-exit must be exit or _exit\n");
    return 2;
  }
  std::fflush(stdout);  // nothing buffered may be printed twice after fork

  std::vector<pid_t> pids;
  for (int i = 0; i < children; ++i) {
    const pid_t pid = fork();
    if (pid < 0) {
      std::perror("fork");
      return 1;
    }
    if (pid == 0) {
      const int code = run_small_workload(launches) ? 0 : 3;
      if (child_exit == "_exit") _exit(code);
      std::exit(code);
    }
    pids.push_back(pid);
  }

  int children_ok = 0;
  for (pid_t pid : pids) {
    int status = 0;
    if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
      ++children_ok;
    else
      std::fprintf(stderr, "error: child %d failed (wait status 0x%x)\n", int(pid), status);
  }
  const bool parent_ok = run_small_workload(launches);

  std::printf("fork_gpu: children=%d children_ok=%d parent=%s\n", children, children_ok,
              parent_ok ? "ok" : "failed");
  return children_ok == children && parent_ok ? 0 : 1;
}
