#include "preload/state/section.h"

#include <sys/random.h>
#include <unistd.h>

#include "preload/base/clock.h"

namespace proflaunch {
namespace {

uint64_t random_section_id() noexcept {
  uint64_t id = 0;
  if (getrandom(&id, sizeof id, GRND_NONBLOCK) != sizeof id) {
    // No entropy yet (early boot): time and pid still separate processes.
    id = now_ns() * 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(getpid()) << 32);
  }
  return id != 0 ? id : 1;
}

}  // namespace

SectionIdentity make_section_identity(uint32_t flags, uint64_t parent_section) noexcept {
  SectionIdentity section;
  section.id = random_section_id();
  section.pid = static_cast<uint32_t>(getpid());
  section.ppid = static_cast<uint32_t>(getppid());
  section.flags = flags;
  section.parent_section = parent_section;
  section.monotonic_ns = clock_ns(CLOCK_MONOTONIC);
  section.realtime_ns = clock_ns(CLOCK_REALTIME);
  section.boottime_ns = clock_ns(CLOCK_BOOTTIME);
  return section;
}

void format_hex64(uint64_t value, char* out) noexcept {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (int i = 15; i >= 0; --i) {
    out[i] = kDigits[value & 0xF];
    value >>= 4;
  }
  out[16] = '\0';
}

void format_exec_parent(const SectionIdentity& section, char* out) noexcept {
  char digits[12];
  int count = 0;
  uint32_t pid = section.pid;
  do {
    digits[count++] = static_cast<char>('0' + pid % 10);
    pid /= 10;
  } while (pid != 0);
  char* cursor = out;
  while (count > 0) *cursor++ = digits[--count];
  *cursor++ = ':';
  format_hex64(section.id, cursor);
}

}  // namespace proflaunch
