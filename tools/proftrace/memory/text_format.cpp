#include "tools/proftrace/memory/text_format.h"

#include <cstdio>

namespace proflaunch::tools::memory {

std::string human_bytes(uint64_t bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes) / 1024.0;
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  return text;
}

std::string grouped(uint64_t count) {
  std::string digits = std::to_string(count);
  std::string text;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) text += ',';
    text += digits[i];
  }
  return text;
}

std::string seconds_since(uint64_t ns, uint64_t base_ns, int decimals) {
  const double seconds = ns >= base_ns ? static_cast<double>(ns - base_ns) / 1e9
                                       : -static_cast<double>(base_ns - ns) / 1e9;
  char text[48];
  std::snprintf(text, sizeof text, "%.*f s", decimals, seconds);
  return text;
}

std::string human_duration(uint64_t ns) {
  char text[48];
  if (ns < 1000) std::snprintf(text, sizeof text, "%llu ns", static_cast<unsigned long long>(ns));
  else if (ns < 1'000'000) std::snprintf(text, sizeof text, "%.1f us", static_cast<double>(ns) / 1e3);
  else if (ns < 1'000'000'000) std::snprintf(text, sizeof text, "%.1f ms", static_cast<double>(ns) / 1e6);
  else std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(ns) / 1e9);
  return text;
}

}  // namespace proflaunch::tools::memory
