// CPU sampling of every thread (README.md): the interface for the rest of
// the shim.
#pragma once

#include <signal.h>

#include <cstdint>

#include "formats/records.h"
#include "preload/config.h"

namespace proflaunch::sampling {

// At load, after the runtime started: picks the signal, installs the
// handler, arms the calling (main) thread and registers the writer task.
// Does nothing when --cpu-sampling=off or not recording.
void start_cpu_sampling(const Config& config) noexcept;

// The signal the sampler holds: claimed_sampling_signal() in
// state/sampling_signal.h.

// The program installs a disposition for the sampling signal: timers off,
// pending samples discarded, one line on stderr, CpuSamplingInfo kSteppedBack.
// Then the caller installs the program's disposition with the real call.
void step_back() noexcept;

// A new thread (from the pthread_create hook), before its start routine.
void arm_new_thread() noexcept;

// The shim's crash handler calls this first for SIGSEGV/SIGBUS: a fault in
// the sampler's own reads of the interrupted thread's memory jumps back into
// the sampling handler (the sample is counted as unsafe); otherwise it
// returns and the crash takes its course.
void recover_from_sampler_fault(int signal_number, const siginfo_t* info) noexcept;

// The state as CpuSamplingInfo says it (tests).
format::CpuSamplingState sampling_state() noexcept;

}  // namespace proflaunch::sampling
