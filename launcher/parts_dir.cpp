#include "launcher/parts_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "preload/config.h"

namespace proflaunch::launcher {

bool PartsLock::acquire(const std::string& dir, std::string* error) {
  release();
  const std::string path = dir + "/" + kLockName;
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  int result;
  do result = flock(fd, LOCK_EX | LOCK_NB);
  while (result != 0 && errno == EINTR);
  if (result != 0) {
    const int reason = errno;
    char text[32] = {};
    const ssize_t n = pread(fd, text, sizeof text - 1, 0);
    close(fd);
    const std::string holder = n > 0 ? std::string(text, static_cast<size_t>(n)) : "";
    if (reason == EWOULDBLOCK)
      *error = "another proflaunch" + (holder.empty() ? std::string() : " (pid " + holder + ")") +
               " is using " + dir + " right now";
    else
      *error = "cannot lock " + path + ": " + std::strerror(reason);
    return false;
  }
  // The holder's pid, for the message another run prints.
  const std::string pid = std::to_string(getpid());
  if (ftruncate(fd, 0) == 0) {
    [[maybe_unused]] const ssize_t ignored = pwrite(fd, pid.data(), pid.size(), 0);
  }
  fd_ = fd;
  return true;
}

void PartsLock::release() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

MakeDir make_parts_dir(const std::string& dir, std::string* error) {
  if (mkdir(dir.c_str(), 0755) == 0) return MakeDir::kMade;
  if (errno == EEXIST) {
    struct stat info {};
    if (lstat(dir.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) return MakeDir::kExists;
    *error = dir + " exists and is not a directory";
    return MakeDir::kFailed;
  }
  *error = "cannot create " + dir + ": " + std::strerror(errno);
  return MakeDir::kFailed;
}

namespace {

bool is_part(const char* name) {
  const size_t n = std::strlen(name);
  return n > 5 && std::strcmp(name + n - 5, ".part") == 0;
}

}  // namespace

std::vector<std::string> part_names(const std::string& dir, std::string* error) {
  std::vector<std::string> names;
  DIR* handle = opendir(dir.c_str());
  if (handle == nullptr) {
    *error = "cannot read " + dir + ": " + std::strerror(errno);
    return names;
  }
  while (const dirent* entry = readdir(handle))
    if (is_part(entry->d_name)) names.emplace_back(entry->d_name);
  closedir(handle);
  std::sort(names.begin(), names.end());
  return names;
}

bool has_parts(const std::string& dir) {
  std::string error;
  return !part_names(dir, &error).empty();
}

void discard_parts(const std::string& dir) {
  std::string error;
  for (const std::string& name : part_names(dir, &error)) unlink((dir + "/" + name).c_str());
}

uint32_t part_pid(const std::string& name) {
  uint64_t pid = 0;
  size_t i = 0;
  for (; i < name.size() && i < 10 && name[i] >= '0' && name[i] <= '9'; ++i) pid = pid * 10 + (name[i] - '0');
  if (i == 0 || i >= name.size() || name[i] != '-' || pid == 0 || pid > UINT32_MAX) return 0;
  return static_cast<uint32_t>(pid);
}

bool traced_into(uint32_t pid, const std::string& dir) {
  if (pid == 0 || pid == static_cast<uint32_t>(getpid())) return false;
  const std::string proc = "/proc/" + std::to_string(pid);
  // State after the last ')' of stat: a zombie has exited, and written all it will.
  std::ifstream stat_file(proc + "/stat");
  const std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return false;
  const char state = stat[paren + 2];
  if (state == 'Z' || state == 'X' || state == 'x') return false;
  // A recycled pid belongs to a process that was not started into this run.
  std::ifstream environ_file(proc + "/environ", std::ios::binary);
  const std::string wanted = std::string(kEnvPartsDir) + "=" + dir;
  std::string entry;
  while (std::getline(environ_file, entry, '\0'))
    if (entry == wanted) return true;
  return false;
}

std::vector<uint32_t> running_writers(const std::string& dir, const std::vector<uint32_t>& also) {
  std::vector<uint32_t> candidates = also;
  std::string error;
  for (const std::string& name : part_names(dir, &error))
    if (const uint32_t pid = part_pid(name); pid != 0) candidates.push_back(pid);
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::vector<uint32_t> running;
  for (uint32_t pid : candidates)
    if (traced_into(pid, dir)) running.push_back(pid);
  return running;
}

}  // namespace proflaunch::launcher
