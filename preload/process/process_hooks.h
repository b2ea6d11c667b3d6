// Interposed libc functions that keep the trace whole across process events:
// exec (flush before the image is replaced), posix_spawn (environment only),
// _exit (flush without atexit), thread renames. Their real definitions are resolved once at load.
#pragma once

namespace proflaunch {

void init_exec_hooks(const char* library_path) noexcept;
void init_exit_hooks() noexcept;
void init_spawn_hooks() noexcept;
void init_thread_name_hook() noexcept;

}  // namespace proflaunch
