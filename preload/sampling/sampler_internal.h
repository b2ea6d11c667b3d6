// Shared between the sampler's files (not for the rest of the shim).
#pragma once

#include <signal.h>

#include <atomic>
#include <cstdint>

#include "formats/records.h"

namespace proflaunch::sampling {

struct SamplerGlobals {
  std::atomic<uint8_t> state{0};  // format::CpuSamplingState
  std::atomic<uint32_t> state_changes{0};
  std::atomic<uint64_t> state_since_ns{0};
  std::atomic<bool> fault_net{false};  // the shim's crash handler is SIGSEGV's and SIGBUS's
  int signal_number = 0;
  uint32_t hz = 0;
  uint32_t depth = 32;
  uint64_t period_ns = 0;
  // Samples only while the runtime records (capture windows); false in the
  // in-process tests and benchmarks, which have no runtime.
  bool follows_recording = false;
  uintptr_t shim_start = 0;  // the shim's own code: left out of stacks
  uintptr_t shim_end = 0;
};
extern SamplerGlobals g_sampler;

void on_sampling_signal(int signal_number, siginfo_t* info, void* context);
void register_sample_drain() noexcept;

}  // namespace proflaunch::sampling
