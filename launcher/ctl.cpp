#include "launcher/ctl.h"

#include <dirent.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "launcher/control_dir.h"
#include "launcher/output_name.h"
#include "preload/capture/capture_spec.h"

namespace proflaunch::launcher {
namespace {

void say(const std::string& line) { std::fprintf(stderr, "proflaunch ctl: %s\n", line.c_str()); }

// A connected socket to `path`, or -1 with errno set.
int connect_unix(const std::string& path) {
  if (!fits_socket_path(path)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strcpy(address.sun_path, path.c_str());
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    const int why = errno;
    close(fd);
    errno = why;
    return -1;
  }
  return fd;
}

struct Job {
  std::string socket;
  long pid = 0;
};

// The jobs whose launchers answer; sockets of dead launchers are removed.
std::vector<Job> live_jobs(const std::string& dir, std::string* error) {
  std::vector<Job> jobs;
  struct stat info {};
  if (lstat(dir.c_str(), &info) != 0) return jobs;  // no job ever ran
  if (!ensure_control_dir(dir, error)) return jobs;
  DIR* handle = opendir(dir.c_str());
  if (handle == nullptr) {
    *error = "cannot read " + dir + ": " + std::strerror(errno);
    return jobs;
  }
  while (const dirent* entry = readdir(handle)) {
    const std::string name = entry->d_name;
    if (name.size() < 6 || name.compare(name.size() - 5, 5, ".sock") != 0) continue;
    const std::string path = dir + "/" + name;
    const int fd = connect_unix(path);
    const int why = errno;
    const bool up = fd >= 0;
    if (up) close(fd);
    if (!up && (why == ECONNREFUSED || why == ENOENT)) {
      unlink(path.c_str());  // its launcher is gone
      continue;
    }
    if (up) jobs.push_back({path, std::atol(name.c_str())});
  }
  closedir(handle);
  std::sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.pid < b.pid; });
  return jobs;
}

// Sends one request and returns the answer's lines (the last is "end",
// "error ...", or "unknown ..."); empty when the job did not answer.
std::vector<std::string> ask(const Job& job, const std::string& request, int timeout_ms) {
  std::vector<std::string> lines;
  const int fd = connect_unix(job.socket);
  if (fd < 0) return lines;
  const std::string text = request + "\n";
  if (send(fd, text.data(), text.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(text.size())) {
    close(fd);
    return lines;
  }
  std::string line;
  while (true) {
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    char buffer[4096];
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      if (buffer[i] != '\n') {
        line.push_back(buffer[i]);
        continue;
      }
      lines.push_back(line);
      line.clear();
    }
  }
  close(fd);
  return lines;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  size_t at = 0;
  while (true) {
    const size_t tab = line.find('\t', at);
    fields.push_back(line.substr(at, tab == std::string::npos ? std::string::npos : tab - at));
    if (tab == std::string::npos) break;
    at = tab + 1;
  }
  return fields;
}

int list(const std::string& dir) {
  std::string error;
  const std::vector<Job> jobs = live_jobs(dir, &error);
  if (!error.empty()) {
    say(error);
    return 1;
  }
  if (jobs.empty()) {
    std::printf("no traced job of yours is running\n");
    return 0;
  }
  for (const Job& job : jobs) {
    for (const std::string& line : ask(job, "list", 5000)) {
      if (line.rfind("job ", 0) == 0) {
        const auto f = split_tabs(line.substr(4));
        if (f.size() < 4) continue;
        std::printf("job %s (%s) -> %s: %s\n", f[0].c_str(), f[1].c_str(), f[2].c_str(), f[3].c_str());
        std::printf("  %-8s %-5s %-10s %s\n", "PID", "RANK", "STATE", "COMMAND");
      } else if (line.rfind("process ", 0) == 0) {
        const auto f = split_tabs(line.substr(8));
        if (f.size() < 4) continue;
        std::printf("  %-8s %-5s %-10s %s\n", f[0].c_str(), f[1] == "-1" ? "-" : f[1].c_str(), f[2].c_str(),
                    f[3].c_str());
      }
    }
  }
  return 0;
}

}  // namespace

int ctl_main(int argc, char** argv) {
  CLI::App app{"capture on demand: list the traced jobs you own, start and stop recording, dump "
               "flight recorders, from another terminal",
               "proflaunch ctl"};
  app.require_subcommand(1);
  long pid = 0;
  std::string duration, output;
  bool force = false;
  app.add_subcommand("list", "the traced processes you own, by job");
  auto add_target = [&](CLI::App* command) {
    command->add_option("--pid", pid, "a traced process, or a proflaunch (launcher) pid for its whole job")
        ->required();
    command->add_option("-o,--output", output,
                        "then write what the process recorded so far to this trace (one file per process "
                        "for a whole job: NAME.rank0.trace, ... or NAME.pidN.trace)");
    command->add_flag("-f,--force", force, "replace existing output files");
  };
  CLI::App* start = app.add_subcommand("start", "open a capture window now (jobs started with --idle)");
  add_target(start);
  start->add_option("--duration", duration, "close it after this long (e.g. 5s); with -o, then write the trace");
  add_target(app.add_subcommand("stop", "close the capture window (jobs started with --idle)"));
  add_target(app.add_subcommand("dump",
                                "write out the flight recorder (--ring) or flush what was recorded, into the "
                                "run's trace, or into -o now"));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? 0 : 2;
  }
  const std::string dir = control_dir();
  CLI::App* chosen = app.get_subcommands().front();
  const std::string verb = chosen->get_name();
  if (verb == "list") return list(dir);

  if (pid <= 0) {
    say("--pid expects a process id");
    return 2;
  }
  uint64_t duration_ns = 0;
  if (!duration.empty() && (!parse_duration(duration.c_str(), duration_ns) || duration_ns == 0)) {
    say("--duration '" + duration + "': expected a duration such as 5s or 500ms");
    return 2;
  }
  if (verb == "start" && !output.empty() && duration_ns == 0) {
    say("start -o needs --duration (or give -o to ctl stop)");
    return 2;
  }
  std::string error;
  const std::vector<Job> jobs = live_jobs(dir, &error);
  if (!error.empty()) {
    say(error);
    return 1;
  }
  const std::string request = verb + " " + std::to_string(pid) + " " + std::to_string(duration_ns) + " " +
                              (force ? "1" : "0") + " " + (output.empty() ? "-" : absolute_path(output));
  const int timeout_ms = 60000 + static_cast<int>(std::min<uint64_t>(duration_ns / 1000000, 24ull * 3600 * 1000));
  for (const Job& job : jobs) {
    const std::vector<std::string> answer = ask(job, request, timeout_ms);
    if (answer.empty() || answer.back().rfind("unknown", 0) == 0) continue;
    int code = answer.back() == "end" ? 0 : 1;
    for (const std::string& line : answer) {
      if (line == "end") continue;
      if (line.rfind("error ", 0) == 0) say(line.substr(6));
      else if (line.rfind("failed ", 0) == 0) {
        say("cannot write " + line.substr(7));
        code = 1;
      } else if (line.rfind("silent ", 0) == 0) {
        say("pid " + line.substr(7));
      } else if (line.rfind("ok ", 0) == 0 || line.rfind("written ", 0) == 0) {
        std::printf("%s\n", line.rfind("ok ", 0) == 0 ? line.substr(3).c_str() : line.c_str());
      }
    }
    return code;
  }
  say("no traced process with pid " + std::to_string(pid) + " among your jobs (proflaunch ctl list shows them)");
  return 1;
}

}  // namespace proflaunch::launcher
