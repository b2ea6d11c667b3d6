// Where the control sockets of a user's proflaunch jobs live: one directory
// per user that only that user can enter, one socket per job,
// <launcher pid>.sock. $PROFLAUNCH_CONTROL_DIR, else
// $XDG_RUNTIME_DIR/proflaunch, else /tmp/proflaunch-<uid>.
#pragma once

#include <string>

namespace proflaunch::launcher {

std::string control_dir();

// Creates the directory (mode 0700) when missing, then checks that it is a
// directory (not a link), owned by this user, with no access for anyone
// else. False with a message otherwise: another user could read or replace
// the sockets.
bool ensure_control_dir(const std::string& dir, std::string* error);

// Unix socket paths are short (108 bytes with the NUL).
bool fits_socket_path(const std::string& path);

}  // namespace proflaunch::launcher
