#include "preload/part_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "formats/chunk_encoder.h"
#include "preload/log.h"
#include "preload/section.h"

namespace proflaunch {
namespace {

// Programs that close "all other descriptors" usually walk up from 3, and a
// new open() takes the lowest free number: keeping ours high makes it
// unlikely that the program's files and ours trade places.
constexpr int kHighDescriptorFloor = 512;

}  // namespace

bool PartFile::open(const char* parts_dir, uint32_t pid, uint64_t section_id) noexcept {
  char section_hex[17];
  format_hex64(section_id, section_hex);
  std::snprintf(path_, sizeof path_, "%s/%u-%s.part", parts_dir, pid, section_hex);

  int fd = ::open(path_, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    fail("cannot create", errno);
    return false;
  }
  const int high = fcntl(fd, F_DUPFD_CLOEXEC, kHighDescriptorFloor);
  if (high >= 0) {
    ::close(fd);
    fd = high;
  }
  fd_ = fd;
  const format::FileHeader header = format::make_file_header();
  return append(&header, sizeof header);
}

bool PartFile::append(const void* bytes, size_t length) noexcept {
  if (fd_ < 0 || failed_) return false;
  const auto* cursor = static_cast<const uint8_t*>(bytes);
  size_t left = length;
  while (left > 0) {
    const ssize_t n = ::write(fd_, cursor, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // n == 0 does not happen for regular files; treat it as "no space".
      const int error = n < 0 ? errno : ENOSPC;
      // Cut the partial chunk so the part ends on a chunk boundary. Shrinking
      // is allowed under RLIMIT_FSIZE and on a full disk.
      if (ftruncate(fd_, static_cast<off_t>(good_bytes_)) == 0)
        lseek(fd_, static_cast<off_t>(good_bytes_), SEEK_SET);
      fail("cannot write", error);
      return false;
    }
    cursor += n;
    left -= static_cast<size_t>(n);
  }
  good_bytes_ += length;
  return true;
}

void PartFile::close() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void PartFile::reset() noexcept {
  close();
  failed_ = false;
  good_bytes_ = 0;
  path_[0] = '\0';
}

void PartFile::mark_failed(const char* what) noexcept {
  failed_ = true;
  warn_once(Warning::kWriteFailed, what, " ", path_, "; recording stopped, the program continues");
}

void PartFile::fail(const char* what, int error) noexcept {
  failed_ = true;
  char message[kMaxPathBytes + 128];
  std::snprintf(message, sizeof message, "%s %s: %s; recording stopped, the program continues",
                what, path_, strerrordesc_np(error) ? strerrordesc_np(error) : "error");
  warn_once(Warning::kWriteFailed, message);
}

}  // namespace proflaunch
