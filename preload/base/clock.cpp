#include "preload/base/clock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace proflaunch {

bool g_ticks_are_tsc = false;
TickSample g_tick_origin{0, 0};

TickSample take_tick_sample() noexcept {
  constexpr uint64_t kTightBracketTicks = 400;  // ~0.15 us; a clock read is ~25 ns
  TickSample best{now_ns(), 0};
  if (!g_ticks_are_tsc) {
    best.ticks = best.ns;
    return best;
  }
  uint64_t best_bracket = UINT64_MAX;
  for (int attempt = 0; attempt < 16 && best_bracket > kTightBracketTicks; ++attempt) {
    const uint64_t before = now_ticks();
    const uint64_t ns = now_ns();
    const uint64_t after = now_ticks();
    if (after - before < best_bracket) {
      best_bracket = after - before;
      best = TickSample{ns, before + (after - before) / 2};
    }
  }
  return best;
}

void init_tick_source() noexcept {
  // PROFLAUNCH_TICKS=clock forces clock_gettime (for comparison and tests).
  g_ticks_are_tsc = false;
  const char* forced = getenv("PROFLAUNCH_TICKS");
  const bool clock_forced = forced != nullptr && std::strcmp(forced, "clock") == 0;
  char source[32] = {};
  const int fd = clock_forced ? -1
                              : open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                                     O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    const ssize_t n = read(fd, source, sizeof source - 1);
    close(fd);
    g_ticks_are_tsc = n >= 3 && std::strncmp(source, "tsc", 3) == 0 && (n == 3 || source[3] == '\n');
  }
  g_tick_origin = take_tick_sample();
}

}  // namespace proflaunch
