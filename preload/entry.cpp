// Load and unload of the shared library: the only place the shim runs on its
// own initiative. Everything else happens inside hooks or on the writer.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "preload/base/log.h"
#include "preload/config.h"
#include "preload/hook_sets.h"
#include "preload/process/lifecycle.h"
#include "preload/process/process_hooks.h"

namespace proflaunch {
namespace {

const char* lookup_environment(const char* name, void*) { return std::getenv(name); }

// One line per bad setting; the default is used and the program runs on.
void report_bad_setting(const char* variable, const char* value, const char* problem, void*) {
  char line[512];
  std::snprintf(line, sizeof line, "%s=%.200s: %s", variable, value != nullptr ? value : "",
                problem);
  print_line(line);
}

const char* own_library_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&lookup_environment), &info) == 0) return nullptr;
  return info.dli_fname;
}

__attribute__((constructor)) void on_library_load() {
  // Real functions first: a hook may run as soon as the constructor returns.
  init_exec_hooks(own_library_path());
  init_exit_hooks();
  init_spawn_hooks();
  init_thread_name_hook();

  Config config;
  parse_config(config, lookup_environment, nullptr, report_bad_setting, nullptr);
  // The exec marker is for this image only; its own children get a fresh one
  // from the exec hooks, and a stale one must not mislead them.
  unsetenv(kEnvExecParent);
  runtime::start(config);
  start_hook_sets(config);
}

__attribute__((destructor)) void on_library_unload() { runtime::finish(); }

}  // namespace
}  // namespace proflaunch
