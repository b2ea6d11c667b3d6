#include "launcher/control_dir.h"

#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace proflaunch::launcher {

std::string control_dir() {
  if (const char* dir = std::getenv("PROFLAUNCH_CONTROL_DIR"); dir != nullptr && *dir != '\0') return dir;
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime != nullptr && *runtime == '/')
    return std::string(runtime) + "/proflaunch";
  return "/tmp/proflaunch-" + std::to_string(getuid());
}

bool ensure_control_dir(const std::string& dir, std::string* error) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    *error = "cannot create " + dir + ": " + std::strerror(errno);
    return false;
  }
  struct stat info {};
  if (lstat(dir.c_str(), &info) != 0) {
    *error = "cannot check " + dir + ": " + std::strerror(errno);
    return false;
  }
  if (!S_ISDIR(info.st_mode)) {
    *error = dir + " is not a directory";
    return false;
  }
  if (info.st_uid != getuid()) {
    *error = dir + " belongs to another user";
    return false;
  }
  if ((info.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
    *error = dir + " is open to other users (mode " + mode + "); it must be 0700";
    return false;
  }
  return true;
}

bool fits_socket_path(const std::string& path) { return path.size() < sizeof(sockaddr_un{}.sun_path); }

}  // namespace proflaunch::launcher
