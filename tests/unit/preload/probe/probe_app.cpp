// Target program for the shim's end-to-end tests. Each mode exercises one
// process event while calling probe_event() (recorded by the probe hook when
// libproflaunch_probe.so is preloaded, a no-op otherwise). Values encode who
// emitted them so tests can check where each event ended up:
//   value = origin * kOriginStride + sequence
// Usage: probe_app <mode> [numbers...]
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <linux/sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/preload/probe/probe.h"

namespace {

constexpr uint64_t kOriginStride = 1000000;

void emit_range(uint64_t origin, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) probe_event(origin * kOriginStride + i);
}

uint64_t number(int argc, char** argv, int index, uint64_t fallback) {
  return index < argc ? std::strtoull(argv[index], nullptr, 10) : fallback;
}

void say(const char* text) {
  std::fputs(text, stdout);
  std::fflush(stdout);
}

// Threads 1..count: odd ones emit half and exit early (while others still
// run), even ones rename themselves after their first event.
int run_threads(uint64_t thread_count, uint64_t per_thread) {
  std::vector<std::thread> threads;
  for (uint64_t t = 1; t <= thread_count; ++t) {
    threads.emplace_back([t, per_thread] {
      const std::string name = "probe-" + std::to_string(t);
      if (t % 2 == 1) {
        pthread_setname_np(pthread_self(), name.c_str());
        emit_range(t, per_thread);
        return;  // exits early
      }
      probe_event(t * kOriginStride);
      pthread_setname_np(pthread_self(), (name + "-late").c_str());
      for (uint64_t i = 1; i < per_thread; ++i) probe_event(t * kOriginStride + i);
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
    });
  }
  emit_range(0, per_thread);
  for (auto& thread : threads) thread.join();
  std::printf("emitted %llu\n", static_cast<unsigned long long>((thread_count + 1) * per_thread));
  return 0;
}

// Many short-lived recording threads, one after another. Prints the process's
// virtual size at the end: buffers of exited threads must have been freed.
int run_thread_churn(uint64_t thread_count, uint64_t per_thread) {
  for (uint64_t t = 1; t <= thread_count; ++t) {
    std::thread([t, per_thread] { emit_range(t, per_thread); }).join();
    if (t % 50 == 0) usleep(30000);  // let the writer catch up now and then
  }
  usleep(300000);
  FILE* status = std::fopen("/proc/self/status", "r");
  char line[256];
  while (status != nullptr && std::fgets(line, sizeof line, status) != nullptr)
    if (std::strncmp(line, "VmSize:", 7) == 0) std::printf("%s", line);
  if (status != nullptr) std::fclose(status);
  return 0;
}

int run_fork(uint64_t count, bool child_uses__exit) {
  emit_range(0, count);
  const pid_t child = fork();
  if (child < 0) return 2;
  if (child == 0) {
    emit_range(1, count);
    if (child_uses__exit) _exit(0);
    std::exit(0);
  }
  emit_range(2, count);
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

// Forks again and again while other threads record as fast as they can (so
// the writer is busy and its locks are often held at the moment of fork).
// Every child records a few events from the forking thread and _exits.
int run_fork_storm(uint64_t forks, uint64_t busy_threads) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (uint64_t t = 0; t < busy_threads; ++t)
    threads.emplace_back([t, &stop] {
      for (uint64_t i = 0; !stop.load(std::memory_order_relaxed); ++i)
        probe_event((t + 10) * kOriginStride + i % kOriginStride);
    });
  int failures = 0;
  for (uint64_t f = 0; f < forks; ++f) {
    probe_event(f);
    const pid_t child = fork();
    if (child == 0) {
      emit_range(1, 10);
      _exit(0);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
      ++failures;
  }
  stop.store(true);
  for (auto& thread : threads) thread.join();
  std::printf("forks done, %d failed\n", failures);
  return failures == 0 ? 0 : 1;
}

int run_exec(char** argv, uint64_t count, const char* how) {
  emit_range(0, count);
  const std::string count_text = std::to_string(count);
  char* child_argv[] = {argv[0], const_cast<char*>("exec-child"),
                        const_cast<char*>(count_text.c_str()), nullptr};
  if (std::strcmp(how, "clean-env") == 0) {
    char* empty_environment[] = {nullptr};
    execve("/proc/self/exe", child_argv, empty_environment);
  } else if (std::strcmp(how, "execl") == 0) {
    execl("/proc/self/exe", argv[0], "exec-child", count_text.c_str(), static_cast<char*>(nullptr));
  } else {
    execv("/proc/self/exe", child_argv);
  }
  std::perror("exec");
  return 1;
}

// posix_spawn with an empty environment: the child must still be traced.
int run_spawn(char** argv, uint64_t count) {
  emit_range(0, count);
  const std::string count_text = std::to_string(count);
  char* child_argv[] = {argv[0], const_cast<char*>("exec-child"),
                        const_cast<char*>(count_text.c_str()), nullptr};
  char* empty_environment[] = {nullptr};
  pid_t child = 0;
  if (posix_spawn(&child, "/proc/self/exe", nullptr, nullptr, child_argv, empty_environment) != 0)
    return 1;
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

int run_exec_fail(uint64_t count) {
  emit_range(0, count);
  char* child_argv[] = {const_cast<char*>("missing"), nullptr};
  execv("/nonexistent/probe-missing", child_argv);
  emit_range(1, count);
  say("exec failed as expected\n");
  return 0;
}

// A daemon-like program that closes every descriptor but stdio while it
// records, then opens files of its own (which take the lowest numbers).
int run_close_fds(uint64_t count) {
  emit_range(0, count);
  usleep(150000);  // the part file has been created and written by now
  for (int fd = 3; fd < 4096; ++fd) close(fd);
  for (int i = 0; i < 8; ++i) open("/dev/null", O_RDONLY);
  emit_range(1, count);
  say("closed\n");
  return 0;
}

int run_loop(uint64_t ready_after) {
  for (uint64_t i = 0;; ++i) {
    probe_event(i);
    if (i + 1 == ready_after) say("ready\n");
    usleep(1000);
  }
}

int run_flood(uint64_t thread_count, uint64_t per_thread) {
  std::vector<std::thread> threads;
  for (uint64_t t = 0; t < thread_count; ++t)
    threads.emplace_back([t, per_thread] { emit_range(t, per_thread); });
  for (auto& thread : threads) thread.join();
  return 0;
}

std::atomic<int> g_signal_seen{0};
void on_signal(int signal_number) { g_signal_seen.store(signal_number); }

int run_signal(int signal_number) {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(signal_number, &action, nullptr);
  emit_range(0, 100);
  say("ready\n");
  for (uint64_t i = 100; g_signal_seen.load() == 0; ++i) {
    probe_event(i);
    usleep(1000);
  }
  std::printf("handled signal %d\n", g_signal_seen.load());
  return 0;
}

// Counts the SIGINTs that reach it in the second after "ready". With
// "own-group" it first leaves the launcher's process group, so a terminal
// Ctrl-C can only reach it through the launcher.
std::atomic<int> g_sigint_count{0};
void count_sigint(int) { g_sigint_count.fetch_add(1); }

int run_count_sigint(bool own_group) {
  if (own_group) setpgid(0, 0);
  struct sigaction action {};
  action.sa_handler = count_sigint;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  probe_event(0);
  say("ready\n");
  usleep(1000000);
  std::printf("sigint count %d\n", g_sigint_count.load());
  return 0;
}

// Normal output on both streams and a chosen exit code: traced and untraced
// runs must be byte-identical.
int run_output(uint64_t count, int exit_code) {
  for (uint64_t i = 0; i < count; ++i) {
    probe_event(i);
    if (i % 1000 == 0) {
      std::printf("line %llu\n", static_cast<unsigned long long>(i));
      std::fprintf(stderr, "err %llu\n", static_cast<unsigned long long>(i));
    }
  }
  std::printf("done\n");
  return exit_code;
}

// "<this program> exec-child <count>", for a child to exec.
struct ExecChildArgv {
  ExecChildArgv(char* self, uint64_t count) : count_text(std::to_string(count)) {
    argv[0] = self;
    argv[1] = const_cast<char*>("exec-child");
    argv[2] = count_text.data();
    argv[3] = nullptr;
  }
  std::string count_text;
  char* argv[4];
};

// 0 when `child` exited with 0, else 1.
int wait_for_success(pid_t child) {
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child) return 1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

// A daemon: forks, the child starts a session and forks again, the
// grandchild leaves the launcher's stdio and records `count` events after
// `sleep_ms`, outliving this process. Prints the daemon's pid.
int run_daemon(uint64_t sleep_ms, uint64_t count) {
  emit_range(0, count);
  int report[2];
  if (pipe(report) != 0) return 2;
  const pid_t middle = fork();
  if (middle < 0) return 2;
  if (middle == 0) {
    setsid();
    const pid_t daemon = fork();
    if (daemon == 0) {
      const int null = open("/dev/null", O_RDWR);
      dup2(null, 0);
      dup2(null, 1);
      dup2(null, 2);
      if (null > 2) close(null);
      const uint32_t self = static_cast<uint32_t>(getpid());
      [[maybe_unused]] const ssize_t n = write(report[1], &self, sizeof self);
      close(report[0]);
      close(report[1]);
      usleep(static_cast<useconds_t>(sleep_ms * 1000));
      emit_range(1, count);
      std::exit(0);
    }
    _exit(daemon > 0 ? 0 : 1);
  }
  close(report[1]);
  uint32_t daemon = 0;
  const bool told = read(report[0], &daemon, sizeof daemon) == static_cast<ssize_t>(sizeof daemon);
  close(report[0]);
  int status = 0;
  waitpid(middle, &status, 0);
  std::printf("daemon %u\n", daemon);
  return told && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

// `forks` children at once, each recording 10 events and then waiting; every
// `kill_every`-th is killed with SIGKILL once the others have exited, after
// its events were flushed (waits past the flush interval first).
int run_fork_kill(uint64_t forks, uint64_t kill_every) {
  std::vector<pid_t> children;
  for (uint64_t f = 0; f < forks; ++f) {
    probe_event(f);
    const pid_t child = fork();
    if (child < 0) break;
    if (child == 0) {
      emit_range(1 + f, 10);
      if (kill_every != 0 && f % kill_every == 0)
        for (;;) pause();
      usleep(50000);
      _exit(0);
    }
    children.push_back(child);
  }
  usleep(600000);  // past several flushes: the waiting children's events are on disk
  int unexpected = 0;
  for (uint64_t f = 0; f < children.size(); ++f) {
    const bool doomed = kill_every != 0 && f % kill_every == 0;
    if (doomed) kill(children[f], SIGKILL);
    int status = 0;
    waitpid(children[f], &status, 0);
    if (doomed ? !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) : !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
      ++unexpected;
  }
  std::printf("%zu children, %d unexpected\n", children.size(), unexpected);
  return children.size() == forks && unexpected == 0 ? 0 : 1;
}

// vfork, then exec in the child (what posix_spawn and subprocess do inside
// glibc, here through the program's own execv call).
int run_vfork_exec(char** argv, uint64_t count) {
  emit_range(0, count);
  ExecChildArgv child_argv(argv[0], count);
  const pid_t child = vfork();
  if (child == 0) {
    execv("/proc/self/exe", child_argv.argv);
    _exit(127);
  }
  emit_range(2, count);
  return wait_for_success(child);
}

// Every signal blocked in every thread (the writer's included, which starts
// after) while it records for a while and exits.
int run_block_signals(uint64_t count) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  for (uint64_t i = 0; i < count; ++i) {
    probe_event(i);
    if (i % 100 == 99) usleep(10000);
  }
  say("blocked\n");
  return 0;
}

// Runs out of descriptors (RLIMIT_NOFILE 64) while it records past several
// flushes, then gives them back and records more.
int run_exhaust_fds(uint64_t count) {
  const rlimit limit{64, 64};
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return 2;
  std::vector<int> held;
  for (int fd; (fd = open("/dev/null", O_RDONLY)) >= 0;) held.push_back(fd);
  const int exhausted = errno;
  emit_range(0, count);
  usleep(400000);
  for (int fd : held) close(fd);
  emit_range(1, count);
  std::printf("exhausted: %s\n", exhausted == EMFILE ? "EMFILE" : std::strerror(exhausted));
  return 0;
}

// A child made by a raw clone3 (fork-like: no atfork handlers run, so the
// shim is not told) that execs at once, as some runtimes spawn.
int run_clone3_exec(char** argv, uint64_t count) {
  emit_range(0, count);
  ExecChildArgv child_argv(argv[0], count);
  clone_args args{};
  args.exit_signal = SIGCHLD;
  const long child = syscall(SYS_clone3, &args, sizeof args);
  if (child == 0) {
    execv("/proc/self/exe", child_argv.argv);
    _exit(127);
  }
  emit_range(2, count);
  return wait_for_success(static_cast<pid_t>(child));
}

// A fork child that records, closes every descriptor, stdio included
// (closefrom(0)), and execs.
int run_closefrom_exec(char** argv, uint64_t count) {
  emit_range(0, count);
  ExecChildArgv child_argv(argv[0], count);
  const pid_t child = fork();
  if (child == 0) {
    emit_range(3, 10);
    closefrom(0);
    execv("/proc/self/exe", child_argv.argv);
    _exit(127);
  }
  emit_range(2, count);
  return wait_for_success(child);
}

// dup2 over every descriptor from 3 up to 1023 while recording.
int run_dup2_high(uint64_t count) {
  emit_range(0, count);
  usleep(150000);  // the part exists and has been written
  const int null = open("/dev/null", O_RDWR);
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  const int top = static_cast<int>(std::min<rlim_t>(limit.rlim_cur, 1024));
  for (int fd = 3; fd < top; ++fd)
    if (fd != null) dup2(null, fd);
  emit_range(1, count);
  usleep(150000);
  for (int fd = 3; fd < top; ++fd) close(fd);
  say("dup2 done\n");
  return 0;
}

// Runs out of address space (RLIMIT_AS) while it records past several
// flushes, then frees it and records more.
int run_exhaust_memory(uint64_t count) {
  probe_event(0);
  usleep(150000);  // the writer runs and the part exists
  unsigned long vm_kib = 0;
  if (FILE* status = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, status) != nullptr)
      if (std::sscanf(line, "VmSize: %lu kB", &vm_kib) == 1) break;
    std::fclose(status);
  }
  const rlim_t bytes = static_cast<rlim_t>(vm_kib) * 1024 + (256u << 20);
  const rlimit limit{bytes, RLIM_INFINITY};
  if (vm_kib == 0 || setrlimit(RLIMIT_AS, &limit) != 0) return 2;
  std::vector<void*> blocks;
  for (void* block; blocks.size() < 4096 && (block = std::malloc(1 << 20)) != nullptr;) {
    std::memset(block, 1, 1 << 20);
    blocks.push_back(block);
  }
  for (uint64_t i = 1; i <= count; ++i) probe_event(i);
  usleep(300000);
  for (void* block : blocks) std::free(block);
  const rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
  setrlimit(RLIMIT_AS, &unlimited);
  emit_range(1, count);
  std::printf("exhausted: %s\n", blocks.size() < 4096 ? "yes" : "no");
  return 0;
}

// A real fault (SIGSEGV), also in a UBSan build: the null store is the point.
volatile int* volatile g_nowhere = nullptr;
__attribute__((noinline, no_sanitize("undefined"))) void write_through_null() { *g_nowhere = 1; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: probe_app <mode> [numbers...]\n");
    return 2;
  }
  const std::string mode = argv[1];
  const uint64_t a = number(argc, argv, 2, 1000);
  const uint64_t b = number(argc, argv, 3, 1000);
  if (mode == "emit") {
    emit_range(0, a);
    std::printf("emitted %llu\n", static_cast<unsigned long long>(a));
    return static_cast<int>(number(argc, argv, 3, 0));
  }
  if (mode == "threads") return run_threads(a, b);
  if (mode == "thread-churn") return run_thread_churn(a, b);
  if (mode == "fork") return run_fork(a, false);
  if (mode == "fork-_exit") return run_fork(a, true);
  if (mode == "fork-storm") return run_fork_storm(a, b);
  if (mode == "exec") return run_exec(argv, a, "execv");
  if (mode == "exec-clean-env") return run_exec(argv, a, "clean-env");
  if (mode == "exec-execl") return run_exec(argv, a, "execl");
  if (mode == "exec-child") {
    emit_range(1, a);
    return 0;
  }
  if (mode == "exec-fail") return run_exec_fail(a);
  if (mode == "spawn") return run_spawn(argv, a);
  if (mode == "segv") {
    emit_range(0, a);
    write_through_null();
    return 0;
  }
  if (mode == "abort") {
    emit_range(0, a);
    std::abort();
  }
  if (mode == "os-exit") {
    emit_range(0, a);
    std::fflush(stdout);
    _exit(5);
  }
  if (mode == "loop") return run_loop(a);
  if (mode == "close-fds") return run_close_fds(a);
  if (mode == "flood") return run_flood(a, b);
  if (mode == "sigterm") return run_signal(SIGTERM);
  if (mode == "sigint") return run_signal(SIGINT);
  if (mode == "count-sigint") return run_count_sigint(argc > 2 && std::string(argv[2]) == "own-group");
  if (mode == "daemon") return run_daemon(a, b);
  if (mode == "fork-kill") return run_fork_kill(a, b);
  if (mode == "vfork-exec") return run_vfork_exec(argv, a);
  if (mode == "block-signals") return run_block_signals(a);
  if (mode == "exhaust-fds") return run_exhaust_fds(a);
  if (mode == "clone3-exec") return run_clone3_exec(argv, a);
  if (mode == "closefrom-exec") return run_closefrom_exec(argv, a);
  if (mode == "dup2-high") return run_dup2_high(a);
  if (mode == "exhaust-memory") return run_exhaust_memory(a);
  if (mode == "output") return run_output(a, static_cast<int>(number(argc, argv, 3, 0)));
  std::fprintf(stderr, "probe_app: unknown mode %s\n", mode.c_str());
  return 2;
}
