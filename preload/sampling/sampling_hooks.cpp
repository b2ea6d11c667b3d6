// The exported libc functions the sampler needs (only in the injected
// library): pthread_create, to arm each new thread before its start routine
// runs; sigaction, signal and sigset, so that the program never sees the
// sampling signal's handler and, if it installs its own, gets the signal
// back (the sampler steps back).
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

#include "preload/base/guard.h"
#include "preload/intercept/dlsym_interposer.h"
#include "preload/intercept/libc_symbols.h"
#include "preload/sampling/cpu_sampling.h"
#include "preload/state/sampling_signal.h"

namespace {

using CreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);
using SignalFn = sighandler_t (*)(int, sighandler_t);

// The next definition (RTLD_NEXT), not libc's own: a sanitizer runtime
// (TSan, ASan) intercepts these too and must see every thread and handler.
template <typename Fn>
Fn libc(const char* name) {
  if (void* next = dlsym(RTLD_NEXT, name)) return reinterpret_cast<Fn>(next);
  return reinterpret_cast<Fn>(proflaunch::intercept::find_libc_symbol(name));
}

// No function-local statics here: their guard (__cxa_guard_acquire) is
// itself intercepted by TSan, which calls these hooks before it is ready.
// A relaxed atomic, looked up again by a racing caller: the same answer.
std::atomic<CreateFn> g_create{nullptr};
std::atomic<SigactionFn> g_sigaction{nullptr};
std::atomic<SignalFn> g_signal{nullptr};
std::atomic<SignalFn> g_sigset{nullptr};

CreateFn real_create() {
  CreateFn fn = g_create.load(std::memory_order_relaxed);
  if (fn == nullptr) g_create.store(fn = libc<CreateFn>("pthread_create"), std::memory_order_relaxed);
  return fn;
}
// libc's own, found without dlsym: a sanitizer runtime preloaded ahead of
// the shim (TSan) calls these from its own interceptors, early in its start,
// and resolving through dlsym there crashed a TSan-built program.
SigactionFn real_sigaction() {
  SigactionFn fn = g_sigaction.load(std::memory_order_relaxed);
  if (fn == nullptr)
    g_sigaction.store(fn = reinterpret_cast<SigactionFn>(proflaunch::intercept::find_libc_symbol("sigaction")),
                      std::memory_order_relaxed);
  return fn;
}
SignalFn libc_signal_function(std::atomic<SignalFn>& slot, const char* name) {
  SignalFn fn = slot.load(std::memory_order_relaxed);
  if (fn == nullptr)
    slot.store(fn = reinterpret_cast<SignalFn>(proflaunch::intercept::find_libc_symbol(name)), std::memory_order_relaxed);
  return fn;
}

struct StartArguments {
  void* (*routine)(void*);
  void* argument;
};

void* start_sampled_thread(void* raw) {
  const StartArguments start = *static_cast<StartArguments*>(raw);
  std::free(raw);
  proflaunch::sampling::arm_new_thread();
  return start.routine(start.argument);
}

// What the program would see untraced: the default disposition.
void fill_default(struct sigaction* old) {
  if (old == nullptr) return;
  *old = {};
  old->sa_handler = SIG_DFL;
  sigemptyset(&old->sa_mask);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                                                     void* (*routine)(void*), void* argument) {
  CreateFn real = real_create();
  if (real == nullptr) return EAGAIN;
  // The shim's own threads (created from inside the shim) are never sampled.
  if (proflaunch::claimed_sampling_signal() == 0 || proflaunch::inside_profiler())
    return real(thread, attr, routine, argument);
  auto* start = static_cast<StartArguments*>(std::malloc(sizeof(StartArguments)));
  if (start == nullptr) return real(thread, attr, routine, argument);
  *start = StartArguments{routine, argument};
  const int result = real(thread, attr, start_sampled_thread, start);
  if (result != 0) std::free(start);
  return result;
}

extern "C" __attribute__((visibility("default"))) int sigaction(int signal_number, const struct sigaction* action,
                                                                struct sigaction* old) {
  SigactionFn real = real_sigaction();
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  if (signal_number == 0 || signal_number != proflaunch::claimed_sampling_signal())
    return real(signal_number, action, old);
  if (action == nullptr) {
    fill_default(old);
    return 0;
  }
  proflaunch::sampling::step_back();
  const int result = real(signal_number, action, nullptr);
  if (result == 0) fill_default(old);
  return result;
}

extern "C" __attribute__((visibility("default"))) sighandler_t signal(int signal_number, sighandler_t handler) {
  if (signal_number != 0 && signal_number == proflaunch::claimed_sampling_signal()) {
    proflaunch::sampling::step_back();
    // glibc's signal(): BSD semantics (SA_RESTART, the handler stays).
    struct sigaction action {};
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    sigaddset(&action.sa_mask, signal_number);
    action.sa_flags = SA_RESTART;
    if (real_sigaction()(signal_number, &action, nullptr) != 0) return SIG_ERR;
    return SIG_DFL;
  }
  SignalFn real = libc_signal_function(g_signal, "signal");
  if (real == nullptr) return SIG_ERR;
  return real(signal_number, handler);
}

extern "C" __attribute__((visibility("default"))) sighandler_t sigset(int signal_number, sighandler_t handler) {
  if (signal_number != 0 && signal_number == proflaunch::claimed_sampling_signal())
    proflaunch::sampling::step_back();
  SignalFn real = libc_signal_function(g_sigset, "sigset");
  if (real == nullptr) return SIG_ERR;
  return real(signal_number, handler);
}
