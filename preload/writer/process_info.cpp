#include "preload/writer/process_info.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <string_view>

#include "preload/record/definitions.h"

namespace proflaunch {
namespace {

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

}  // namespace proflaunch
