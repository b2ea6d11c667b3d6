#include "preload/state/section.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <string_view>

#include "preload/base/clock.h"
#include "preload/record/definitions.h"

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

// Reads a small /proc file whole; empty on failure.
std::string read_small_file(const char* path) {
  std::string content;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return content;
  char chunk[4096];
  while (content.size() < (size_t{1} << 20)) {
    const ssize_t n = read(fd, chunk, sizeof chunk);
    if (n <= 0) break;
    content.append(chunk, static_cast<size_t>(n));
  }
  close(fd);
  return content;
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

format::ProcessInfoRecord build_process_info(const SectionIdentity& section,
                                             const Config& config) noexcept {
  format::ProcessInfoRecord record{};
  record.header = format::header_for<format::ProcessInfoRecord>();
  record.pid = section.pid;
  record.ppid = section.ppid;
  record.rank = config.rank;
  record.local_rank = config.local_rank;
  record.world_size = config.world_size;
  record.flags = section.flags;
  record.monotonic_ns = section.monotonic_ns;
  record.realtime_ns = section.realtime_ns;
  record.boottime_ns = section.boottime_ns;
  record.parent_section_id = section.parent_section;

  try {
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0) record.host_string = intern_string(host);

    std::string command_line = read_small_file("/proc/self/cmdline");
    if (!command_line.empty() && command_line.back() == '\0') command_line.pop_back();
    record.command_line_string = intern_string(command_line);

    char executable[kMaxPathBytes];
    const ssize_t length = readlink("/proc/self/exe", executable, sizeof executable - 1);
    if (length > 0) record.executable_string = intern_string(std::string_view(executable, length));

    record.tool_version_string = intern_string("proflaunch " PROFLAUNCH_VERSION);
  } catch (...) {
  }
  return record;
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
