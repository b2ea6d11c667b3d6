// One section's output: <parts dir>/<pid>-<section id hex>.part, a FileHeader
// then chunks. Created lazily (a process that records nothing leaves no
// file), written with plain write(2) by the writer thread only (its signals
// are blocked, so RLIMIT_FSIZE yields EFBIG instead of SIGXFSZ).
//
// A failed write cuts the file back to the last complete chunk and stops the
// output for good: the part stays readable and the program goes on.
#pragma once

#include <cstddef>
#include <cstdint>

#include "preload/config.h"

namespace proflaunch {

class PartFile {
 public:
  PartFile() = default;
  ~PartFile() { close(); }
  PartFile(const PartFile&) = delete;
  PartFile& operator=(const PartFile&) = delete;

  // Creates the file and writes the FileHeader. False (with a warning) when
  // it cannot: the caller treats that as a failed write.
  bool open(const char* parts_dir, uint32_t pid, uint64_t section_id) noexcept;

  bool is_open() const noexcept { return fd_ >= 0; }
  bool failed() const noexcept { return failed_; }
  const char* path() const noexcept { return path_; }
  uint64_t bytes_written() const noexcept { return good_bytes_; }

  // Appends one complete chunk; false when the write failed (warned once).
  bool append(const void* bytes, size_t length) noexcept;

  void close() noexcept;

  // Ready for another section's file (after a failed exec).
  void reset() noexcept;

  int descriptor() const noexcept { return fd_; }

  // Stops the output for a reason other than a failed write ("<what> <path>").
  void mark_failed(const char* what) noexcept;

 private:
  void fail(const char* what, int error) noexcept;

  int fd_ = -1;
  bool failed_ = false;
  uint64_t good_bytes_ = 0;
  char path_[kMaxPathBytes] = {};
};

}  // namespace proflaunch
