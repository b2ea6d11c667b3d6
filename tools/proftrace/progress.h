// A one-line progress indicator on stderr for long conversions, shown only
// when stderr is a terminal (never in logs or pipes).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace proflaunch::tools {

class Progress {
 public:
  // enabled: usually isatty(STDERR_FILENO). `total_bytes`: input size.
  Progress(bool enabled, std::string what, uint64_t total_bytes);
  ~Progress() { finish(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Cheap to call often: redraws at most a few times per second.
  void update(uint64_t done_bytes, uint64_t records) {
    if (enabled_ && ++calls_ % 16 == 0) redraw(done_bytes, records);
  }
  // Clears the line.
  void finish();

 private:
  void redraw(uint64_t done_bytes, uint64_t records);

  bool enabled_;
  bool drawn_ = false;
  std::string what_;
  uint64_t total_bytes_;
  uint64_t calls_ = 0;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace proflaunch::tools
