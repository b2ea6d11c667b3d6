// exec family: every variant is interposed because glibc's execvp, execl...
// reach execve internally, past any preload. Each one flushes the section
// synchronously (the writer ends it with SectionEnd), passes the environment
// that keeps the new image traced, and calls the real exec. If the exec
// fails, the process continues in a new section.
//
// In a vfork child (posix_spawn, Python's subprocess) the parent's memory is
// shared and the parent's writer is not ours to drive: only the environment
// is prepared, on the stack.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>

#include "preload/intercept/real_symbols.h"
#include "preload/process/exec_environment.h"
#include "preload/process/lifecycle.h"
#include "preload/process/process_hooks.h"
#include "preload/state/runtime_state.h"

extern char** environ;

namespace proflaunch {
namespace {

using ExecveFunction = int(const char*, char* const[], char* const[]);
ExecveFunction* g_real_execve = nullptr;
ExecveFunction* g_real_execvpe = nullptr;

int traced_exec(const char* file, char* const argv[], char* const envp[], bool search_path) {
  ExecveFunction* real = search_path ? g_real_execvpe : g_real_execve;
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  const runtime::State state = runtime::state();
  if (state == runtime::State::kOff) return real(file, argv, envp);

  const bool owner = runtime::owns_this_process();
  if (owner) runtime::before_exec();
  ExecEnvironment environment;
  char* const* prepared = environment.build(envp, runtime::section_pid(), runtime::section_id());
  const int result = real(file, argv, prepared);
  const int saved_errno = errno;
  if (owner) runtime::after_failed_exec();
  errno = saved_errno;
  return result;
}

// execl* take their arguments inline; gather them into an argv array on the
// stack (or a mapping for very long lists: no malloc, vfork child safe).
class ArgumentList {
 public:
  // Consumes the arguments and their terminating NULL from `*arguments`.
  ArgumentList(const char* first, va_list* arguments) {
    va_list counting;
    va_copy(counting, *arguments);
    size_t count = 1;
    if (first != nullptr)
      while (va_arg(counting, const char*) != nullptr) ++count;
    va_end(counting);
    if (count + 1 > kStackArguments) {
      mapping_bytes_ = (count + 1) * sizeof(char*);
      void* mapping = mmap(nullptr, mapping_bytes_, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (mapping == MAP_FAILED) {
        ok_ = false;
        return;
      }
      mapping_ = mapping;
      argv_ = static_cast<const char**>(mapping);
    }
    argv_[0] = first;
    for (size_t i = 1; i < count; ++i) argv_[i] = va_arg(*arguments, const char*);
    argv_[count] = nullptr;
    if (first != nullptr) va_arg(*arguments, const char*);  // the terminating NULL
  }
  ~ArgumentList() {
    if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
  }
  ArgumentList(const ArgumentList&) = delete;
  ArgumentList& operator=(const ArgumentList&) = delete;

  bool ok() const { return ok_; }
  char* const* argv() const { return const_cast<char* const*>(argv_); }

 private:
  static constexpr size_t kStackArguments = 256;
  const char* stack_[kStackArguments];
  const char** argv_ = stack_;
  void* mapping_ = nullptr;
  size_t mapping_bytes_ = 0;
  bool ok_ = true;
};

}  // namespace

void init_exec_hooks(const char* library_path) noexcept {
  g_real_execve = intercept::resolve_next<ExecveFunction>("execve");
  g_real_execvpe = intercept::resolve_next<ExecveFunction>("execvpe");
  save_exec_settings(library_path);
}

}  // namespace proflaunch

using proflaunch::ArgumentList;
using proflaunch::traced_exec;

extern "C" {

__attribute__((visibility("default"))) int execve(const char* path, char* const argv[],
                                                  char* const envp[]) {
  return traced_exec(path, argv, envp, false);
}

__attribute__((visibility("default"))) int execv(const char* path, char* const argv[]) {
  return traced_exec(path, argv, environ, false);
}

__attribute__((visibility("default"))) int execvp(const char* file, char* const argv[]) {
  return traced_exec(file, argv, environ, true);
}

__attribute__((visibility("default"))) int execvpe(const char* file, char* const argv[],
                                                   char* const envp[]) {
  return traced_exec(file, argv, envp, true);
}

__attribute__((visibility("default"))) int execl(const char* path, const char* arg, ...) {
  va_list arguments;
  va_start(arguments, arg);
  ArgumentList list(arg, &arguments);
  va_end(arguments);
  if (!list.ok()) {
    errno = E2BIG;
    return -1;
  }
  return traced_exec(path, list.argv(), environ, false);
}

__attribute__((visibility("default"))) int execlp(const char* file, const char* arg, ...) {
  va_list arguments;
  va_start(arguments, arg);
  ArgumentList list(arg, &arguments);
  va_end(arguments);
  if (!list.ok()) {
    errno = E2BIG;
    return -1;
  }
  return traced_exec(file, list.argv(), environ, true);
}

__attribute__((visibility("default"))) int execle(const char* path, const char* arg, ...) {
  va_list arguments;
  va_start(arguments, arg);
  ArgumentList list(arg, &arguments);
  char* const* envp = va_arg(arguments, char* const*);  // follows the NULL
  va_end(arguments);
  if (!list.ok()) {
    errno = E2BIG;
    return -1;
  }
  return traced_exec(path, list.argv(), envp, false);
}

}  // extern "C"
