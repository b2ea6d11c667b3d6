#include "preload/writer/part_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "formats/chunk_encoder.h"
#include "preload/base/log.h"
#include "preload/state/section.h"

namespace proflaunch {

bool PartFile::create(const char* parts_dir, uint32_t pid, uint64_t section_id) noexcept {
  char section_hex[17];
  format_hex64(section_id, section_hex);
  std::snprintf(path_, sizeof path_, "%s/%u-%s.part", parts_dir, pid, section_hex);

  const int fd = ::open(path_, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return open_failed("cannot create", errno);
  created_ = true;
  const format::FileHeader header = format::make_file_header();
  const bool ok = write_at_end(fd, &header, sizeof header);
  ::close(fd);
  return ok;
}

bool PartFile::append(const void* bytes, size_t length) noexcept {
  if (!created_ || failed_) return false;
  const int fd = ::open(path_, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return open_failed("cannot reopen", errno);
  const bool ok = write_at_end(fd, bytes, length);
  ::close(fd);
  return ok;
}

bool PartFile::write_at_end(int fd, const void* bytes, size_t length) noexcept {
  const auto* cursor = static_cast<const uint8_t*>(bytes);
  size_t left = length;
  while (left > 0) {
    const ssize_t n = ::write(fd, cursor, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // n == 0 does not happen for regular files; treat it as "no space".
      const int error = n < 0 ? errno : ENOSPC;
      // Cut the partial chunk so the part ends on a chunk boundary. Shrinking
      // is allowed under RLIMIT_FSIZE and on a full disk.
      [[maybe_unused]] const int ignored = ftruncate(fd, static_cast<off_t>(good_bytes_));
      fail("cannot write", error);
      return false;
    }
    cursor += n;
    left -= static_cast<size_t>(n);
  }
  good_bytes_ += length;
  return true;
}

void PartFile::reset() noexcept {
  created_ = false;
  failed_ = false;
  good_bytes_ = 0;
  path_[0] = '\0';
}

void PartFile::mark_failed(const char* what) noexcept {
  failed_ = true;
  warn_once(Warning::kWriteFailed, what, " ", path_, "; recording stopped, the program continues");
}

bool PartFile::open_failed(const char* what, int error) noexcept {
  if (error == EMFILE || error == ENFILE || error == ENOMEM || error == EAGAIN || error == EINTR) {
    char message[kMaxPathBytes + 160];
    std::snprintf(message, sizeof message,
                  "%s %s: %s; the events until it can are counted as lost, the program continues", what,
                  path_, strerrordesc_np(error) ? strerrordesc_np(error) : "error");
    warn_once(Warning::kOpenPart, message);
    return false;
  }
  fail(what, error);
  return false;
}

void PartFile::fail(const char* what, int error) noexcept {
  failed_ = true;
  char message[kMaxPathBytes + 128];
  std::snprintf(message, sizeof message, "%s %s: %s; recording stopped, the program continues",
                what, path_, strerrordesc_np(error) ? strerrordesc_np(error) : "error");
  warn_once(Warning::kWriteFailed, message);
}

}  // namespace proflaunch
