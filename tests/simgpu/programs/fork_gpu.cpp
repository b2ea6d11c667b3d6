// Forked worker processes around a GPU program, in the two shapes real
// programs take (CUDA does not survive fork: a child may only use the GPU
// if its parent had not initialized CUDA before forking).
//   --mode workers-use-gpu (default): the parent does not touch CUDA before
//     forking; each child initializes CUDA, runs a small workload and exits;
//     then the parent uses the GPU too (multiprocessing-based launchers).
//   --mode parent-first: the parent uses the GPU, then forks children that
//     only compute on the CPU and never call CUDA (DataLoader workers forked
//     by a process that already holds a context), then uses the GPU again.
//
// Children end with exit() by default. --child-exit=_exit ends them with
// _exit(), skipping atexit handlers and static destructors, which is what
// Python's multiprocessing does in its forked children.
//
// usage: fork_gpu [--mode workers-use-gpu|parent-first] [--children N=2] [--launches L=8]
//                 [--child-exit exit|_exit]
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/options.h"
#include "common/small_workload.h"

namespace {

// What a DataLoader worker does: CPU work on a batch, no CUDA at all.
bool cpu_only_work(int seed) {
  std::vector<int> batch(1 << 16);
  long sum = 0;
  for (size_t i = 0; i < batch.size(); ++i) sum += batch[i] = int((i * 31 + seed) % 97);
  return sum > 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options(argc, argv, {"--mode", "--children", "--launches", "--child-exit"});
  const std::string mode = options.text("--mode", "workers-use-gpu");
  const int children = int(options.integer("--children", 2));
  const int launches = int(options.integer("--launches", 8));
  const std::string child_exit = options.text("--child-exit", "exit");
  if ((mode != "workers-use-gpu" && mode != "parent-first") || children < 0 || launches < 0 ||
      (child_exit != "exit" && child_exit != "_exit")) {
    std::fprintf(stderr,
                 "error: --mode must be workers-use-gpu or parent-first, --children/--launches "
                 "must not be negative, --child-exit must be exit or _exit\n");
    return 2;
  }
  const bool workers_use_gpu = mode == "workers-use-gpu";
  bool parent_ok = workers_use_gpu || run_small_workload(launches);
  std::fflush(stdout);  // nothing buffered may be printed twice after fork

  std::vector<pid_t> pids;
  for (int i = 0; i < children; ++i) {
    const pid_t pid = fork();
    if (pid < 0) {
      std::perror("fork");
      return 1;
    }
    if (pid == 0) {
      const bool ok = workers_use_gpu ? run_small_workload(launches) : cpu_only_work(i);
      if (child_exit == "_exit") _exit(ok ? 0 : 3);
      std::exit(ok ? 0 : 3);
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
  parent_ok = run_small_workload(launches) && parent_ok;

  std::printf("fork_gpu: mode=%s children=%d children_ok=%d parent=%s\n", mode.c_str(), children,
              children_ok, parent_ok ? "ok" : "failed");
  return children_ok == children && parent_ok ? 0 : 1;
}
