// A thread's CPU samples summed by function, Python line and module (self:
// the sample's innermost frame; total: anywhere in its stack) and its
// blocking calls by call site: what `stats --section cpu` prints and what
// the gpu-idle-gap rule names.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "tools/proftrace/stacks/stack_formatter.h"
#include "tools/proftrace/stats/cpu_activity.h"

namespace proflaunch::tools::stats {

// Where a stack was, in the program's terms: at the innermost line of the
// program's own Python code (not Python's library or an installed
// package), the Python function that line called, else its own function:
// "Queue.get at loader.py:41", "loads at data.py:17", "decode at
// data.py:17"; without such a line the innermost Python frame's function at
// its own line; without Python frames the innermost native frame; "" when
// empty.
std::string activity_site(const std::vector<StackFormatter::CallSite>& root_first);

struct ProfileCount {
  uint64_t self = 0, total = 0;
};

struct WaitSite {
  uint64_t calls = 0, ns = 0, max_ns = 0;
};

struct ThreadProfile {
  uint64_t samples = 0;    // sampling periods (a sample may stand for several)
  uint64_t period_ns = 0;  // the CPU time one period stands for
  std::map<std::string, ProfileCount> functions, lines, modules;
  // Per "call (waited on) at site".
  std::map<std::string, WaitSite> waits;
  uint64_t blocked_ns = 0;
};

// Builds profiles from samples and waits, symbolizing each distinct stack
// once.
class ProfileBuilder {
 public:
  ProfileBuilder(const TraceModel& model, StackFormatter& formatter) : model_(model), formatter_(formatter) {}

  void add_sample(ThreadProfile& profile, const CpuActivity::Sample& sample);
  // `ns`: the part of the wait counted (a filter may cut it).
  void add_wait(ThreadProfile& profile, const CpuActivity::Wait& wait, uint64_t ns);

  // What the sample was running, as the rule names it (activity_site).
  std::string sample_site(const CpuActivity::Sample& sample);
  // A wait: "pthread_cond_wait (condition variable) in Queue.get at
  // loader.py:41": the call, what it waited on, activity_site of its stack.
  std::string wait_site(const CpuActivity::Wait& wait);

 private:
  struct Keys {
    std::string self_function, self_line, self_module;
    std::vector<std::string> functions, lines, modules;  // distinct
    std::string site;
  };
  const Keys& keys(uint64_t section, uint32_t native, uint32_t python);

  const TraceModel& model_;
  StackFormatter& formatter_;
  std::map<std::tuple<uint64_t, uint32_t, uint32_t>, Keys> cache_;
  std::map<std::tuple<uint64_t, uint32_t, uint32_t, uint16_t, uint8_t>, std::string> wait_sites_;
};

}  // namespace proflaunch::tools::stats
