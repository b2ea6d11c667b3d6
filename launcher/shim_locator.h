// Finds libproflaunch.so relative to the launcher's own executable, so a
// build tree and an installed tree both work without configuration:
//   build tree:    <build>/launcher/proflaunch  ->  <build>/preload/libproflaunch.so
//   install tree:  <prefix>/bin/proflaunch      ->  <prefix>/<libdir>/proflaunch/libproflaunch.so
// PROFLAUNCH_LIBRARY overrides both (a development or test shim).
#pragma once

#include <string>

namespace proflaunch::launcher {

inline constexpr const char* kLibraryOverrideVariable = "PROFLAUNCH_LIBRARY";

struct ShimLocation {
  std::string path;   // absolute; empty when not found
  std::string error;  // what was tried, for the user
};

ShimLocation locate_shim();

// The candidates for an executable at `executable_path`, in search order.
std::string build_tree_candidate(const std::string& executable_path);
std::string install_tree_candidate(const std::string& executable_path);

}  // namespace proflaunch::launcher
