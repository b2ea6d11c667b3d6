// Between the shim's crash handler (process/crash_signals) and the CPU
// sampler (sampling/), which sits below it: the sampler's signal handler
// reads memory of the thread it interrupted, and a fault in those reads must
// come back to it instead of crashing the program. The crash handler calls
// the recovery first (it jumps back into the sampling handler when the fault
// is the sampler's, and returns otherwise), and says which function it is so
// that the sampler knows whether the net is in place.
#pragma once

#include <signal.h>

#include <atomic>

namespace proflaunch {

using SamplerFaultRecovery = void (*)(int signal_number, const siginfo_t* info);
using CrashHandler = void (*)(int, siginfo_t*, void*);

namespace detail {
inline std::atomic<SamplerFaultRecovery> g_sampler_fault_recovery{nullptr};
inline std::atomic<CrashHandler> g_installed_crash_handler{nullptr};
}  // namespace detail

inline void set_sampler_fault_recovery(SamplerFaultRecovery recovery) noexcept {
  detail::g_sampler_fault_recovery.store(recovery, std::memory_order_release);
}
inline SamplerFaultRecovery sampler_fault_recovery() noexcept {
  return detail::g_sampler_fault_recovery.load(std::memory_order_acquire);
}
inline void set_installed_crash_handler(CrashHandler handler) noexcept {
  detail::g_installed_crash_handler.store(handler, std::memory_order_release);
}
inline CrashHandler installed_crash_handler() noexcept {
  return detail::g_installed_crash_handler.load(std::memory_order_acquire);
}

}  // namespace proflaunch
