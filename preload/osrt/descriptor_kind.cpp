#include "preload/osrt/descriptor_kind.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace proflaunch::osrt {

using format::WaitObjectKind;

namespace {

// "/proc/self/fd/<fd>" without stdio.
void descriptor_path(int fd, char (&path)[40]) noexcept {
  static constexpr char kPrefix[] = "/proc/self/fd/";
  std::memcpy(path, kPrefix, sizeof kPrefix);
  char digits[12];
  int count = 0;
  unsigned value = static_cast<unsigned>(fd);
  do {
    digits[count++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0 && count < 11);
  char* out = path + sizeof kPrefix - 1;
  while (count > 0) *out++ = digits[--count];
  *out = '\0';
}

WaitObjectKind anonymous_inode_kind(int fd) noexcept {
  char path[40];
  descriptor_path(fd, path);
  char target[64];
  const ssize_t length = readlink(path, target, sizeof target - 1);
  if (length <= 0) return WaitObjectKind::kOtherFd;
  target[length] = '\0';
  if (std::strcmp(target, "anon_inode:[eventfd]") == 0) return WaitObjectKind::kEventFd;
  if (std::strcmp(target, "anon_inode:[eventpoll]") == 0) return WaitObjectKind::kEpoll;
  return WaitObjectKind::kOtherFd;
}

}  // namespace

WaitObjectKind descriptor_kind(int fd) noexcept {
  if (fd < 0) return WaitObjectKind::kOtherFd;
  struct stat status;
  if (fstat(fd, &status) != 0) return WaitObjectKind::kOtherFd;
  switch (status.st_mode & S_IFMT) {
    case S_IFIFO: return WaitObjectKind::kPipe;
    case S_IFSOCK: return WaitObjectKind::kSocket;
    case S_IFREG:
    case S_IFBLK: return WaitObjectKind::kFile;
    case S_IFCHR: return WaitObjectKind::kCharDevice;
    default: return anonymous_inode_kind(fd);
  }
}

}  // namespace proflaunch::osrt
