// The environment an exec'd image gets from a traced process, built without
// malloc (the exec hooks may run in a vfork child):
//  - PROFLAUNCH_EXEC_PARENT=<pid>:<section>, so the new image knows which
//    section it continues (same pid: after exec) or was spawned from;
//  - the PROFLAUNCH_* settings and LD_PRELOAD with the shim, put back when a
//    program built a fresh environment without them (subprocess with env=...),
//    so every descendant is traced.
#pragma once

#include <cstddef>

#include "preload/config.h"

namespace proflaunch {

// Remembers the shim's path and the PROFLAUNCH_* settings of this image.
// Called once at load, before anything changes the environment.
void save_exec_settings(const char* library_path) noexcept;

class ExecEnvironment {
 public:
  ExecEnvironment() = default;
  ~ExecEnvironment();
  ExecEnvironment(const ExecEnvironment&) = delete;
  ExecEnvironment& operator=(const ExecEnvironment&) = delete;

  // The environment to pass instead of `envp` (NULL counts as empty).
  // Returns `envp` itself when it cannot build one (too large).
  char* const* build(char* const* envp, uint32_t parent_pid, uint64_t parent_section) noexcept;

 private:
  static constexpr size_t kStackEntries = 256;
  const char* stack_entries_[kStackEntries];
  const char** entries_ = stack_entries_;
  void* mapping_ = nullptr;
  size_t mapping_bytes_ = 0;
  char marker_[96];
  char preload_[kMaxPathBytes * 2];
};

}  // namespace proflaunch
