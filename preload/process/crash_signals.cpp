#include "preload/process/crash_signals.h"

#include <signal.h>

#include <atomic>
#include <cerrno>

#include "preload/state/sampler_fault.h"
#include "preload/state/runtime_state.h"
#include "preload/writer/writer.h"

namespace proflaunch {
namespace {

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};

struct sigaction g_previous[NSIG];
std::atomic<bool> g_flush_attempted{false};

bool is_hardware_fault(const siginfo_t* info) {
  // Positive codes other than SI_KERNEL come from the fault itself (SEGV_MAPERR,
  // BUS_ADRALN, FPE_INTDIV, ILL_ILLOPC...); SI_USER, SI_TKILL, SI_QUEUE are <= 0.
  return info != nullptr && info->si_code > 0 && info->si_code != SI_KERNEL;
}

void on_crash_signal(int signal_number, siginfo_t* info, void* /*context*/) {
  // A fault in the CPU sampler's reads of its own thread's memory is no
  // crash: back into the sampling handler, which counts the sample as lost.
  if ((signal_number == SIGSEGV || signal_number == SIGBUS) && is_hardware_fault(info))
    if (SamplerFaultRecovery recovery = sampler_fault_recovery()) recovery(signal_number, info);
  const int saved_errno = errno;
  // Only the first crash flushes, never on the writer (it cannot wait for
  // itself), and never in a vfork child sharing our memory.
  if (!g_flush_attempted.exchange(true) && !on_writer_thread() && runtime::owns_this_process()) {
    // The flight recorder writes out what it keeps (its whole ring: longer).
    const bool ring = runtime::config().capture.ring_ns != 0;
    if (ring) writer_request_dump(format::CaptureTrigger::kCrash);
    writer_flush_and_wait(FlushGoal::kFlush, ring ? kCrashDumpTimeoutMs : kCrashFlushTimeoutMs);
  }
  sigaction(signal_number, &g_previous[signal_number], nullptr);
  // Blocked while this handler runs: delivered again, under the original
  // disposition, as soon as we return.
  if (!is_hardware_fault(info)) raise(signal_number);
  errno = saved_errno;
}

}  // namespace

void install_crash_handlers() noexcept {
  set_installed_crash_handler(on_crash_signal);
  for (int signal_number : kCrashSignals) {
    struct sigaction current {};
    if (sigaction(signal_number, nullptr, &current) != 0) continue;
    const bool is_default =
        (current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_DFL;
    if (!is_default) continue;
    struct sigaction ours {};
    ours.sa_sigaction = on_crash_signal;
    sigemptyset(&ours.sa_mask);
    // SA_ONSTACK: use the program's alternate stack if it set one (a stack
    // overflow cannot be flushed otherwise).
    ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    g_previous[signal_number] = current;
    sigaction(signal_number, &ours, nullptr);
  }
}

}  // namespace proflaunch
