// The parts directory of a run, <output>.parts: each traced process writes
// <pid>-<section>.part there, and the launcher joins them into the output.
//
// One run at a time per directory. The launcher creates it exclusively and
// holds an flock on <parts dir>/lock until it has joined (so does --join
// while it joins): a second run, a --force or a --join while the first still
// runs is refused with the holder's pid, and a launcher that dies (SIGKILL)
// lets go of the lock with it. The descriptor is close-on-exec and opened
// after the program was forked, so the program never holds it.
//
// Processes that outlive the program (daemons, orphans) may still be writing
// when it exits: running_writers() names them, by their part's pid or their
// slot in the control page, checked against /proc so that a recycled pid of
// an unrelated process does not count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace proflaunch::launcher {

inline constexpr const char* kLockName = "lock";

class PartsLock {
 public:
  PartsLock() = default;
  ~PartsLock() { release(); }
  PartsLock(const PartsLock&) = delete;
  PartsLock& operator=(const PartsLock&) = delete;

  // Takes <dir>/lock without waiting. False with a one-line reason: another
  // proflaunch holds it (naming its pid), or the file cannot be opened.
  bool acquire(const std::string& dir, std::string* error);
  void release();

 private:
  int fd_ = -1;
};

enum class MakeDir { kMade, kExists, kFailed };
// mkdir that says whether this call made the directory (two runs racing for
// one name: exactly one gets kMade). *error is set for kFailed.
MakeDir make_parts_dir(const std::string& dir, std::string* error);

// The *.part file names in `dir`, sorted. *error set when it cannot be read.
std::vector<std::string> part_names(const std::string& dir, std::string* error);
bool has_parts(const std::string& dir);
// Removes the *.part files (a --force over stale parts).
void discard_parts(const std::string& dir);

// The pid a part's name starts with ("<pid>-<section>.part"); 0 if none.
uint32_t part_pid(const std::string& name);

// Whether `pid` is a live (not zombie) process traced into `dir`: its
// environment names `dir` as PROFLAUNCH_PARTS_DIR.
bool traced_into(uint32_t pid, const std::string& dir);

// The processes, among the writers of parts in `dir` and `also`, that still
// run and are traced into `dir`: sorted, without duplicates, without us.
std::vector<uint32_t> running_writers(const std::string& dir, const std::vector<uint32_t>& also = {});

}  // namespace proflaunch::launcher
