#include "launcher/control_server.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "launcher/control_dir.h"
#include "launcher/join.h"
#include "launcher/symbol_table.h"
#include "preload/control/control_page.h"

namespace proflaunch::launcher {
namespace {

using control::Command;
using control::SlotState;

constexpr int kAckTimeoutMs = 10000;

bool alive(uint32_t pid) { return pid != 0 && (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

const char* state_name(uint32_t state) {
  switch (static_cast<SlotState>(state)) {
    case SlotState::kRecording: return "recording";
    case SlotState::kPaused: return "idle";
    case SlotState::kRing: return "ring";
    case SlotState::kExited: return "exited";
    case SlotState::kFree: break;
  }
  return "no-writer";  // has recorded nothing yet
}

std::string command_line_of(uint32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && text.back() == '\0') text.pop_back();
  for (char& c : text)
    if (c == '\0' || c == '\t' || c == '\n') c = ' ';
  return text;
}

bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// One line, waiting at most `timeout_ms` for it.
bool read_line(int fd, std::string& line, int timeout_ms) {
  line.clear();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (line.size() < 8192) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char c;
    const ssize_t n = recv(fd, &c, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (c == '\n') return true;
    line.push_back(c);
  }
  return false;
}

// out.trace -> out.rank2.trace (or out.pid1234.trace without a rank).
std::string per_process_name(const std::string& output, int32_t rank, uint32_t pid) {
  const std::string tag = rank >= 0 ? ".rank" + std::to_string(rank) : ".pid" + std::to_string(pid);
  const size_t slash = output.rfind('/');
  const size_t dot = output.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return output + tag;
  return output.substr(0, dot) + tag + output.substr(dot);
}

}  // namespace

ControlServer::~ControlServer() { stop(); }

bool ControlServer::create_page(const std::string& parts_dir, std::string* error) {
  parts_dir_ = parts_dir;
  page_path_ = parts_dir + "/" + control::kPageName;
  const int fd = open(page_path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    *error = "cannot create " + page_path_ + ": " + std::strerror(errno);
    return false;
  }
  // Under a file size limit smaller than the page, EFBIG rather than SIGXFSZ
  // (the run goes on without ctl).
  struct sigaction ignore {}, previous {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGXFSZ, &ignore, &previous);
  void* mapped = MAP_FAILED;
  if (ftruncate(fd, sizeof(control::Page)) == 0)
    mapped = mmap(nullptr, sizeof(control::Page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int saved = errno;
  sigaction(SIGXFSZ, &previous, nullptr);
  close(fd);
  if (mapped == MAP_FAILED) {
    *error = "cannot map " + page_path_ + ": " + std::strerror(saved);
    unlink(page_path_.c_str());
    return false;
  }
  page_ = static_cast<control::Page*>(mapped);
  page_->version = control::kPageVersion;
  page_->magic = control::kPageMagic;  // last: a shim checks it
  return true;
}

bool ControlServer::start(const JobInfo& job, std::string* error) {
  if (page_ == nullptr) return false;
  job_ = job;
  const std::string dir = control_dir();
  if (!ensure_control_dir(dir, error)) return false;
  socket_path_ = dir + "/" + std::to_string(getpid()) + ".sock";
  if (!fits_socket_path(socket_path_)) {
    *error = socket_path_ + " is too long for a unix socket (set PROFLAUNCH_CONTROL_DIR to a shorter directory)";
    return false;
  }
  unlink(socket_path_.c_str());  // a dead job that had our pid
  listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strcpy(address.sun_path, socket_path_.c_str());
  if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      chmod(socket_path_.c_str(), 0600) != 0 || listen(listen_fd_, 8) != 0) {
    *error = "cannot listen on " + socket_path_ + ": " + std::strerror(errno);
    if (listen_fd_ >= 0) close(listen_fd_);
    listen_fd_ = -1;
    unlink(socket_path_.c_str());
    return false;
  }
  // The thread takes no signal: the launcher's forwarding stays on the main thread.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  thread_ = std::thread([this] { serve(); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return true;
}

void ControlServer::stop() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) {
    close(listen_fd_);
    listen_fd_ = -1;
    unlink(socket_path_.c_str());
  }
  if (page_ != nullptr) {
    munmap(page_, sizeof(control::Page));
    page_ = nullptr;
    unlink(page_path_.c_str());
  }
}

void ControlServer::serve() {
  while (!stopping_.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ucred peer{};
    socklen_t length = sizeof peer;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 || peer.uid != getuid()) {
      write_all(fd, "error permission denied: this job belongs to uid " + std::to_string(getuid()) + "\n");
      close(fd);
      continue;
    }
    std::string request;
    if (read_line(fd, request, 5000)) write_all(fd, handle(request));
    close(fd);
  }
}

std::string ControlServer::handle(const std::string& request) {
  std::istringstream in(request);
  std::string verb;
  in >> verb;
  if (verb == "list") return list();
  uint32_t pid = 0;
  uint64_t duration_ns = 0;
  int force = 0;
  std::string output;
  if ((verb == "start" || verb == "stop" || verb == "dump") && (in >> pid >> duration_ns >> force)) {
    std::getline(in >> std::ws, output);
    if (output == "-") output.clear();
    return command(verb, pid, duration_ns, force != 0, output);
  }
  return "error malformed request: " + request + "\n";
}

std::vector<uint32_t> ControlServer::slot_pids() const {
  std::vector<uint32_t> pids;
  if (page_ == nullptr) return pids;
  for (const control::Slot& slot : page_->slots)
    if (const uint32_t pid = slot.pid.load(std::memory_order_acquire); pid != 0) pids.push_back(pid);
  return pids;
}

std::string ControlServer::list() {
  std::string out = "job " + std::to_string(getpid()) + "\t" + job_.mode + "\t" + job_.output + "\t" +
                    job_.command + "\n";
  for (const control::Slot& slot : page_->slots) {
    const uint32_t pid = slot.pid.load(std::memory_order_acquire);
    const uint32_t state = slot.state.load(std::memory_order_acquire);
    if (!alive(pid) || state == static_cast<uint32_t>(SlotState::kExited)) continue;
    out += "process " + std::to_string(pid) + "\t" + std::to_string(slot.rank.load()) + "\t" + state_name(state) +
           "\t" + command_line_of(pid) + "\n";
  }
  return out + "end\n";
}

std::string ControlServer::command(const std::string& verb, uint32_t pid, uint64_t duration_ns, bool force,
                                   const std::string& output) {
  const bool whole_job = pid == static_cast<uint32_t>(getpid());
  std::vector<const control::Slot*> targets;
  bool known = false;
  for (const control::Slot& slot : page_->slots) {
    const uint32_t holder = slot.pid.load(std::memory_order_acquire);
    const uint32_t state = slot.state.load(std::memory_order_acquire);
    if (!alive(holder) || state == static_cast<uint32_t>(SlotState::kExited)) continue;
    if (!whole_job && holder != pid) continue;
    known = true;
    // A process whose writer has not run has recorded nothing and cannot act.
    if (state != static_cast<uint32_t>(SlotState::kFree)) targets.push_back(&slot);
  }
  if (!whole_job && !known) return "unknown " + std::to_string(pid) + "\n";
  if (targets.empty())
    return "error " + std::string(whole_job ? "no process of this job" : "pid " + std::to_string(pid)) +
           " has recorded nothing yet (no writer thread runs), so nothing can be " +
           (verb == "dump" ? "dumped" : verb == "start" ? "started" : "stopped") + " there\n";
  if ((verb == "start" || verb == "stop") && !job_.idle)
    return "error this job records " + job_.mode +
           "; ctl start and stop need a job started with proflaunch --idle (ctl dump works on any job)\n";

  std::string out;
  auto issue = [&](Command command, uint64_t duration) {
    page_->duration_ns.store(duration, std::memory_order_relaxed);
    page_->target_pid.store(whole_job ? 0 : pid, std::memory_order_relaxed);
    page_->command.store(static_cast<uint32_t>(command), std::memory_order_relaxed);
    const uint32_t generation = page_->generation.fetch_add(1, std::memory_order_acq_rel) + 1;
    // Wait for every target to act (or to end).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kAckTimeoutMs);
    std::vector<uint32_t> answered, silent;
    while (true) {
      answered.clear();
      silent.clear();
      for (const control::Slot* slot : targets) {
        const uint32_t holder = slot->pid.load(std::memory_order_acquire);
        if (!alive(holder) || slot->state.load() == static_cast<uint32_t>(SlotState::kExited)) continue;
        if (static_cast<int32_t>(slot->acked.load(std::memory_order_acquire) - generation) >= 0)
          answered.push_back(holder);
        else
          silent.push_back(holder);
      }
      if (silent.empty() || std::chrono::steady_clock::now() >= deadline || stopping_.load()) break;
      usleep(5000);
    }
    for (uint32_t p : silent)
      out += "silent " + std::to_string(p) +
             " (its writer is not running: a fork child that has not recorded yet, or a stopped process)\n";
    return answered;
  };

  std::vector<uint32_t> answered;
  if (verb == "start") {
    answered = issue(Command::kStart, duration_ns);
    out += "ok started " + std::to_string(answered.size()) + " process(es)" +
           (duration_ns != 0 ? " for " + std::to_string(duration_ns / 1000000) + " ms" : std::string()) + "\n";
    if (!output.empty() && duration_ns != 0) {
      // The processes close their windows themselves; a flush after that.
      const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(duration_ns) +
                         std::chrono::milliseconds(50);
      while (std::chrono::steady_clock::now() < until && !stopping_.load()) usleep(10000);
      answered = issue(Command::kFlush, 0);
    }
  } else if (verb == "stop") {
    answered = issue(Command::kStop, 0);
    out += "ok stopped " + std::to_string(answered.size()) + " process(es)\n";
  } else {
    answered = issue(job_.ring ? Command::kDump : Command::kFlush, 0);
    out += std::string("ok ") + (job_.ring ? "dumped" : "flushed") + " " + std::to_string(answered.size()) +
           " process(es)" +
           (output.empty() ? job_.ring ? "; the dumps go into " + job_.output + " at the end of the run"
                                       : "; what they recorded so far is in their parts (-o writes it out now)"
                           : std::string()) +
           "\n";
  }
  if (!output.empty() && !answered.empty()) out += write_outputs(answered, output, force);
  return out + "end\n";
}

std::string ControlServer::write_outputs(const std::vector<uint32_t>& pids, const std::string& output, bool force) {
  std::string out;
  for (uint32_t pid : pids) {
    int32_t rank = -1;
    for (const control::Slot& slot : page_->slots)
      if (slot.pid.load() == pid) rank = slot.rank.load();
    const std::string path = pids.size() == 1 ? output : per_process_name(output, rank, pid);
    const JoinResult joined = copy_parts_of(parts_dir_, {pid}, path, force);
    if (!joined.ok) {
      out += "failed " + path + ": " + joined.error + "\n";
      continue;
    }
    append_symbol_table(path);
    out += "written " + path + " (pid " + std::to_string(pid) + (rank >= 0 ? ", rank " + std::to_string(rank) : "") +
           ", " + std::to_string(joined.output_bytes) + " bytes)\n";
  }
  return out;
}

}  // namespace proflaunch::launcher
