// The output file name: placeholders expanded, uniqueness, and the parts
// directory that goes with it.
//
//   %p       pid of the traced program
//   %h       host name
//   %q{VAR}  value of environment variable VAR (an error if unset)
//   %n       the smallest counter >= 1 that makes the name (and its .parts
//            directory) not exist yet
//   %%       a literal %
#pragma once

#include <string>
#include <sys/types.h>

namespace proflaunch::launcher {

struct NameResult {
  std::string path;   // empty on error
  std::string error;  // one line, for the user
};

// Expands `pattern`. Existence checks (for %n) use `exists`, so tests can
// drive them; by default, the file system.
using ExistsFunction = bool (*)(const std::string& path);
NameResult expand_output_name(const std::string& pattern, pid_t traced_pid,
                              ExistsFunction exists = nullptr);

// Where the processes of a run write their parts: "<output>.parts".
std::string parts_directory_for(const std::string& output_path);

// `path` made absolute against the current directory (no symlink resolution).
std::string absolute_path(const std::string& path);

}  // namespace proflaunch::launcher
