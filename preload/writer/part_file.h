// One section's output: <parts dir>/<pid>-<section id hex>.part, a FileHeader
// then chunks. Created lazily (a process that records nothing leaves no
// file), written with plain write(2) by the writer thread only (its signals
// are blocked, so RLIMIT_FSIZE yields EFBIG instead of SIGXFSZ).
//
// The file is opened for each append and closed right after: a descriptor
// held open for the whole run could be closed by a program that closes
// "all other descriptors", or worse, be closed and its number reused for one
// of the program's files, which we would then write into. At most one
// open/close pair per flush costs nothing measurable.
//
// A failed write cuts the file back to the last complete chunk and stops the
// output for good: the part stays readable and the program goes on. An open
// that fails for want of descriptors or memory (EMFILE, ENFILE, ENOMEM,
// EAGAIN: the program ran out for a while) stops nothing: the call returns
// false without failed(), and the caller tries again at its next flush.
#pragma once

#include <cstddef>
#include <cstdint>

#include "preload/config.h"

namespace proflaunch {

class PartFile {
 public:
  // Creates the file and writes the FileHeader. False (with a warning) when
  // it cannot: the caller treats that as a failed write.
  bool create(const char* parts_dir, uint32_t pid, uint64_t section_id) noexcept;

  bool exists() const noexcept { return created_; }
  bool failed() const noexcept { return failed_; }
  const char* path() const noexcept { return path_; }
  uint64_t bytes_written() const noexcept { return good_bytes_; }

  // Appends one complete chunk; false when the write failed (warned once).
  bool append(const void* bytes, size_t length) noexcept;

  // Ready for another section's file (after a failed exec).
  void reset() noexcept;

  // Allows one more append after a failure (the last attempt, at the end of
  // the section); a failure then is not warned again.
  void clear_failure() noexcept { failed_ = false; }

  // Stops the output for a reason other than a failed write ("<what> <path>").
  void mark_failed(const char* what) noexcept;

 private:
  bool write_at_end(int fd, const void* bytes, size_t length) noexcept;
  void fail(const char* what, int error) noexcept;
  // After a failed open: false, for now only (see above) or through fail().
  bool open_failed(const char* what, int error) noexcept;

  bool created_ = false;
  bool failed_ = false;
  uint64_t good_bytes_ = 0;
  char path_[kMaxPathBytes] = {};
};

}  // namespace proflaunch
