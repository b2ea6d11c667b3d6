// Start, signal choice and the step back (cpu_sampling.h).
#include "preload/sampling/cpu_sampling.h"

#include <dlfcn.h>
#include <link.h>
#include <signal.h>

#include <cstdio>

#include "preload/base/clock.h"
#include "preload/base/log.h"
#include "preload/intercept/dlsym_interposer.h"
#include "preload/intercept/libc_symbols.h"
#include "preload/sampling/sampler_internal.h"
#include "preload/sampling/signal_safe_modules.h"
#include "preload/sampling/thread_sampler.h"
#include "preload/stacks/python_frames.h"
#include "preload/state/runtime_state.h"
#include "preload/state/sampler_fault.h"
#include "preload/state/sampling_signal.h"
#include "preload/writer/writer.h"

namespace proflaunch::sampling {

SamplerGlobals g_sampler;

namespace {

using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);

// libc's own: the exported sigaction hook (sampling_hooks.cpp) hides the
// sampling signal from the program.
SigactionFn real_sigaction() {
  static SigactionFn fn = reinterpret_cast<SigactionFn>(intercept::find_libc_symbol("sigaction"));
  return fn;
}

void set_state(format::CpuSamplingState state) {
  g_sampler.state_since_ns.store(now_ns(), std::memory_order_relaxed);
  g_sampler.state.store(static_cast<uint8_t>(state), std::memory_order_release);
  g_sampler.state_changes.fetch_add(1, std::memory_order_acq_rel);
}

struct RangeSearch {
  uintptr_t inside;
  uintptr_t start = UINTPTR_MAX, end = 0;
  bool found = false;
};
int find_shim(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<RangeSearch*>(data);
  uintptr_t start = UINTPTR_MAX, end = 0;
  bool contains = false;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    if (phdr.p_type != PT_LOAD) continue;
    const uintptr_t s = info->dlpi_addr + phdr.p_vaddr, e = s + phdr.p_memsz;
    if (s < start) start = s;
    if (e > end) end = e;
    if (search->inside >= s && search->inside < e) contains = true;
  }
  if (!contains) return 0;
  search->start = start;
  search->end = end;
  search->found = true;
  return 1;
}

// A real-time signal nobody handles: from SIGRTMAX-2 down (the top of the
// range is where libraries that pick one by hand look last; glibc keeps the
// bottom two for itself, below SIGRTMIN).
int pick_signal() {
  for (int signal_number = SIGRTMAX - 2; signal_number >= SIGRTMIN + 4; --signal_number) {
    struct sigaction current {};
    if (real_sigaction()(signal_number, nullptr, &current) != 0) continue;
    if ((current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_DFL) return signal_number;
  }
  return 0;
}

}  // namespace

format::CpuSamplingState sampling_state() noexcept {
  return static_cast<format::CpuSamplingState>(g_sampler.state.load(std::memory_order_acquire));
}


void start_cpu_sampling(const Config& config) noexcept {
  g_sampler.hz = config.cpu_sampling_hz;
  if (!runtime::active()) return;
  if (config.cpu_sampling_hz == 0) {
    set_state(format::CpuSamplingState::kOff);
    register_sample_drain();  // says "off" when the writer runs anyway
    return;
  }
  g_sampler.depth = config.stack_depth == 0 ? kDefaultStackDepth
                                            : (config.stack_depth > kMaxStackDepth ? kMaxStackDepth : config.stack_depth);
  g_sampler.period_ns = 1000000000ull / config.cpu_sampling_hz;
  g_sampler.follows_recording = true;
  RangeSearch shim{reinterpret_cast<uintptr_t>(&start_cpu_sampling)};
  dl_iterate_phdr(find_shim, &shim);
  if (shim.found) {
    g_sampler.shim_start = shim.start;
    g_sampler.shim_end = shim.end;
  }
  // A sanitizer runtime (ASan, TSan, MSan) has its own rules for signals:
  // TSan defers every handler to its own safe points, LSan's leak check at
  // exit stops every thread and fails when one is in a signal's way. A
  // sanitized program is not sampled (quietly: its stderr is compared).
  for (const char* marker : {"__asan_init", "__tsan_init", "__msan_init", "__lsan_init"}) {
    if (intercept::real_dlsym()(RTLD_DEFAULT, marker) != nullptr) {
      set_state(format::CpuSamplingState::kUnavailable);
      return;
    }
  }
  // The Python frame reader (the stacks layer finds the interpreter; with
  // --stacks=none it has not).
  stacks::init_python_frames();
  refresh_code_ranges(/*force=*/true);
  const int signal_number = real_sigaction() != nullptr ? pick_signal() : 0;
  if (signal_number == 0) {
    print_line("no free real-time signal: CPU sampling is unavailable");
    set_state(format::CpuSamplingState::kUnavailable);
    register_sample_drain();
    return;
  }
  g_sampler.signal_number = signal_number;
  struct sigaction ours {};
  ours.sa_sigaction = on_sampling_signal;
  sigemptyset(&ours.sa_mask);
  // SA_RESTART: a call the kernel can restart is restarted; SA_ONSTACK: a
  // thread near the end of its stack with an alternate one set uses that.
  ours.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  if (!init_thread_samplers(signal_number, g_sampler.period_ns) ||
      real_sigaction()(signal_number, &ours, nullptr) != 0) {
    print_line("cannot install the CPU sampling handler: CPU sampling is unavailable");
    set_state(format::CpuSamplingState::kUnavailable);
    register_sample_drain();
    return;
  }
  set_sampler_fault_recovery(recover_from_sampler_fault);
  set_claimed_sampling_signal(signal_number);
  set_sampling_signal(signal_number);
  set_state(format::CpuSamplingState::kOn);
  register_sample_drain();
  // Samples need a writer even in a process that makes no traced call.
  writer_ensure_started();
  arm_current_thread(signal_number, g_sampler.period_ns);
  if (tls_thread_sampler == nullptr || !tls_thread_sampler->armed.load()) {
    print_line("cannot create a CPU-time timer: CPU sampling is unavailable");
    disarm_all_threads();
    set_state(format::CpuSamplingState::kUnavailable);
    set_sampling_signal(0);
  }
}

void arm_new_thread() noexcept {
  if (g_sampler.state.load(std::memory_order_acquire) != static_cast<uint8_t>(format::CpuSamplingState::kOn)) return;
  arm_current_thread(g_sampler.signal_number, g_sampler.period_ns);
}

void step_back() noexcept {
  const int signal_number = take_claimed_sampling_signal();
  if (signal_number == 0) return;
  set_state(format::CpuSamplingState::kSteppedBack);
  disarm_all_threads();
  set_sampling_signal(0);
  // Setting SIG_IGN discards the samples already pending on any thread
  // (POSIX): none reaches the program's handler.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  real_sigaction()(signal_number, &ignore, nullptr);
  char line[160];
  snprintf(line, sizeof line, "the program installs a handler for signal %d, which CPU sampling used: CPU sampling stops",
           signal_number);
  print_line(line);
}

}  // namespace proflaunch::sampling
