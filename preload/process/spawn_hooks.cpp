// posix_spawn and posix_spawnp: the parent goes on, so nothing needs
// flushing; only the child's environment is prepared as for exec (our
// settings and LD_PRELOAD kept, PROFLAUNCH_EXEC_PARENT naming this section),
// so a program spawned with a fresh environment is still traced and knows
// which section spawned it.
#include <spawn.h>

#include <cerrno>

#include "preload/intercept/real_symbols.h"
#include "preload/process/exec_environment.h"
#include "preload/process/process_hooks.h"
#include "preload/state/runtime_state.h"

namespace proflaunch {
namespace {

using SpawnFunction = int(pid_t*, const char*, const posix_spawn_file_actions_t*,
                          const posix_spawnattr_t*, char* const[], char* const[]);
SpawnFunction* g_real_posix_spawn = nullptr;
SpawnFunction* g_real_posix_spawnp = nullptr;

int traced_spawn(SpawnFunction* real, pid_t* pid, const char* path,
                 const posix_spawn_file_actions_t* actions, const posix_spawnattr_t* attributes,
                 char* const argv[], char* const envp[]) {
  if (real == nullptr) return ENOSYS;
  if (runtime::state() == runtime::State::kOff) return real(pid, path, actions, attributes, argv, envp);
  ExecEnvironment environment;
  char* const* prepared = environment.build(envp, runtime::section_pid(), runtime::section_id());
  return real(pid, path, actions, attributes, argv, prepared);
}

}  // namespace

void init_spawn_hooks() noexcept {
  g_real_posix_spawn = intercept::resolve_next<SpawnFunction>("posix_spawn");
  g_real_posix_spawnp = intercept::resolve_next<SpawnFunction>("posix_spawnp");
}

}  // namespace proflaunch

extern "C" {

__attribute__((visibility("default"))) int posix_spawn(pid_t* pid, const char* path,
                                                       const posix_spawn_file_actions_t* actions,
                                                       const posix_spawnattr_t* attributes,
                                                       char* const argv[], char* const envp[]) {
  return proflaunch::traced_spawn(proflaunch::g_real_posix_spawn, pid, path, actions, attributes,
                                  argv, envp);
}

__attribute__((visibility("default"))) int posix_spawnp(pid_t* pid, const char* file,
                                                        const posix_spawn_file_actions_t* actions,
                                                        const posix_spawnattr_t* attributes,
                                                        char* const argv[], char* const envp[]) {
  return proflaunch::traced_spawn(proflaunch::g_real_posix_spawnp, pid, file, actions, attributes,
                                  argv, envp);
}

}  // extern "C"
