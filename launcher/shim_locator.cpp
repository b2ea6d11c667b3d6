#include "launcher/shim_locator.h"

#include <unistd.h>

#include <cstdlib>

#ifndef PROFLAUNCH_INSTALL_LIBDIR
#define PROFLAUNCH_INSTALL_LIBDIR "lib"
#endif

namespace proflaunch::launcher {
namespace {

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

bool is_readable_file(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

std::string own_executable() {
  char buffer[4096];
  const ssize_t length = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (length <= 0) return "";
  return std::string(buffer, static_cast<size_t>(length));
}

}  // namespace

std::string build_tree_candidate(const std::string& executable_path) {
  return directory_of(executable_path) + "/../preload/libproflaunch.so";
}

std::string install_tree_candidate(const std::string& executable_path) {
  const std::string libdir = PROFLAUNCH_INSTALL_LIBDIR;
  const std::string base = libdir.size() > 0 && libdir[0] == '/'
                               ? libdir
                               : directory_of(executable_path) + "/../" + libdir;
  return base + "/proflaunch/libproflaunch.so";
}

ShimLocation locate_shim() {
  if (const char* override_path = std::getenv(kLibraryOverrideVariable);
      override_path != nullptr && *override_path != '\0') {
    char* resolved = realpath(override_path, nullptr);
    if (resolved == nullptr || !is_readable_file(resolved)) {
      std::free(resolved);
      return {"", std::string(kLibraryOverrideVariable) + "=" + override_path +
                      " does not name a readable file"};
    }
    ShimLocation found{resolved, ""};
    std::free(resolved);
    return found;
  }
  const std::string executable = own_executable();
  if (executable.empty()) return {"", "cannot read /proc/self/exe to find libproflaunch.so"};
  std::string tried;
  for (const std::string& candidate :
       {build_tree_candidate(executable), install_tree_candidate(executable)}) {
    char* resolved = realpath(candidate.c_str(), nullptr);
    if (resolved != nullptr && is_readable_file(resolved)) {
      ShimLocation found{resolved, ""};
      std::free(resolved);
      return found;
    }
    std::free(resolved);
    tried += (tried.empty() ? "" : ", ") + candidate;
  }
  return {"", "cannot find libproflaunch.so (tried " + tried + "); set " +
                  kLibraryOverrideVariable + " to its path"};
}

}  // namespace proflaunch::launcher
