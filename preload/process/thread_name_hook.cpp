// pthread_setname_np: a thread renamed after its first record (PyTorch names
// its workers once they run) gets a new ThreadInfo from that moment on.
#include <pthread.h>

#include <cerrno>

#include "preload/base/clock.h"
#include "preload/base/guard.h"
#include "preload/intercept/real_symbols.h"
#include "preload/process/process_hooks.h"
#include "preload/record/definitions.h"
#include "preload/record/thread_registry.h"
#include "preload/state/runtime_state.h"

namespace proflaunch {
namespace {

using SetNameFunction = int(pthread_t, const char*);
SetNameFunction* g_real_setname = nullptr;

}  // namespace

void init_thread_name_hook() noexcept {
  g_real_setname = intercept::resolve_next<SetNameFunction>("pthread_setname_np");
}

}  // namespace proflaunch

extern "C" __attribute__((visibility("default"))) int pthread_setname_np(pthread_t thread,
                                                                         const char* name) {
  using namespace proflaunch;
  if (g_real_setname == nullptr) return ENOSYS;
  const int result = g_real_setname(thread, name);
  if (result != 0 || !runtime::active()) return result;
  ReentrancyGuard guard;
  if (!guard.outermost()) return result;
  uint32_t tid = 0;
  if (pthread_equal(thread, pthread_self()))
    tid = tls_thread_buffer != nullptr ? tls_thread_buffer->tid() : 0;  // else: named at its first record
  else
    tid = registry_tid_of(thread);
  if (tid != 0) define_thread(tid, name, now_ns());
  return result;
}
