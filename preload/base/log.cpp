#include "preload/base/log.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace proflaunch {
namespace {

std::atomic<bool> g_warned[static_cast<unsigned>(Warning::kCount)];

void append(char* line, size_t capacity, size_t& used, const char* text) {
  if (text == nullptr) return;
  const size_t length = std::strlen(text);
  const size_t room = capacity - 1 - used;  // keep room for '\n'
  const size_t copied = length < room ? length : room;
  std::memcpy(line + used, text, copied);
  used += copied;
}

void write_line(const char* a, const char* b, const char* c, const char* d) {
  char line[1024];
  size_t used = 0;
  append(line, sizeof line, used, "proflaunch: ");
  append(line, sizeof line, used, a);
  append(line, sizeof line, used, b);
  append(line, sizeof line, used, c);
  append(line, sizeof line, used, d);
  line[used++] = '\n';
  const int saved_errno = errno;  // the program may be looking at errno
  size_t written = 0;
  while (written < used) {
    const ssize_t n = ::write(STDERR_FILENO, line + written, used - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  errno = saved_errno;
}

}  // namespace

void warn_once(Warning kind, const char* message) noexcept {
  warn_once(kind, message, nullptr);
}

void warn_once(Warning kind, const char* a, const char* b, const char* c, const char* d) noexcept {
  if (g_warned[static_cast<unsigned>(kind)].exchange(true)) return;
  write_line(a, b, c, d);
}

void print_line(const char* a, const char* b, const char* c, const char* d) noexcept {
  write_line(a, b, c, d);
}

}  // namespace proflaunch
