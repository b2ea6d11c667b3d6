#include "tools/proftrace/progress.h"

namespace proflaunch::tools {

Progress::Progress(bool enabled, std::string what, uint64_t total_bytes)
    : enabled_(enabled), what_(std::move(what)), total_bytes_(total_bytes),
      last_draw_(std::chrono::steady_clock::now()) {}

void Progress::redraw(uint64_t done_bytes, uint64_t records) {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(250)) return;
  last_draw_ = now;
  const double percent = total_bytes_ > 0 ? 100.0 * static_cast<double>(done_bytes) / static_cast<double>(total_bytes_) : 100.0;
  std::fprintf(stderr, "\rproftrace: %s %5.1f%% (%.1f M records)", what_.c_str(), percent,
               static_cast<double>(records) / 1e6);
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::finish() {
  if (drawn_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    drawn_ = false;
  }
}

}  // namespace proflaunch::tools
