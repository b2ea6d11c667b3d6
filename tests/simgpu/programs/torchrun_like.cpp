// A small torchrun: `torchrun_like --nproc N program args...` starts N
// copies of the program with RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE
// and RENDEZVOUS_DIR (a fresh directory standing in for torch's TCPStore),
// waits for all of them, and exits 0 if every rank did, else with the
// first failure's status (128 + signal for a rank killed by one). Like
// torchrun it does not stop the other ranks when one fails: NCCL's timeout
// is what ends them.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  int first = 1, nproc = 0;
  if (argc > 2 && std::strcmp(argv[1], "--nproc") == 0) {
    nproc = std::atoi(argv[2]);
    first = 3;
  }
  if (first < argc && std::strcmp(argv[first], "--") == 0) ++first;
  if (nproc < 1 || first >= argc) {
    std::fprintf(stderr, "usage: torchrun_like --nproc N [--] program [args...]\n");
    return 2;
  }
  char dir_template[] = "/tmp/torchrun_like.XXXXXX";
  if (mkdtemp(dir_template) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  std::vector<pid_t> children;
  for (int rank = 0; rank < nproc; ++rank) {
    const pid_t pid = fork();
    if (pid < 0) {
      std::perror("fork");
      return 1;
    }
    if (pid == 0) {
      const std::string r = std::to_string(rank), n = std::to_string(nproc);
      setenv("RANK", r.c_str(), 1);
      setenv("LOCAL_RANK", r.c_str(), 1);
      setenv("WORLD_SIZE", n.c_str(), 1);
      setenv("LOCAL_WORLD_SIZE", n.c_str(), 1);
      setenv("RENDEZVOUS_DIR", dir_template, 1);
      execvp(argv[first], argv + first);
      std::fprintf(stderr, "torchrun_like: cannot run %s: %s\n", argv[first], std::strerror(errno));
      _exit(127);
    }
    children.push_back(pid);
  }
  // Reap in whatever order they end: a rank that died must not linger as a
  // zombie while we wait for another (its peers watch whether it exists).
  int result = 0;
  for (size_t left = children.size(); left > 0; --left) {
    int status = 0;
    if (waitpid(-1, &status, 0) < 0) break;
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (result == 0 && code != 0) result = code;
  }
  const std::string id_file = std::string(dir_template) + "/nccl_id";
  unlink(id_file.c_str());
  rmdir(dir_template);
  return result;
}
