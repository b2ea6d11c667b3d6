#include "preload/clock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

namespace proflaunch {

bool g_ticks_are_tsc = false;

void init_tick_source() noexcept {
  // PROFLAUNCH_TICKS=clock forces clock_gettime (for comparison and tests).
  const char* forced = getenv("PROFLAUNCH_TICKS");
  if (forced != nullptr && std::strcmp(forced, "clock") == 0) {
    g_ticks_are_tsc = false;
    return;
  }
  char source[32] = {};
  const int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  const ssize_t n = read(fd, source, sizeof source - 1);
  close(fd);
  g_ticks_are_tsc = n >= 3 && std::strncmp(source, "tsc", 3) == 0 && (n == 3 || source[3] == '\n');
}

}  // namespace proflaunch
