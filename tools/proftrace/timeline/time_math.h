// Arithmetic on timeline nanoseconds that cannot overflow. Timestamps come
// from the trace file, and a damaged or hostile one may hold any 64-bit
// value; the output is then nonsense, but the converter's behaviour stays
// defined.
#pragma once

#include <cstdint>
#include <limits>

namespace proflaunch::tools::timeline {

// later - earlier, clamped to the int64 range.
inline int64_t difference_ns(int64_t later, int64_t earlier) {
  int64_t result;
  if (__builtin_sub_overflow(later, earlier, &result))
    return later > earlier ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  return result;
}

// `ns` - `base` + `offset`, wrapping like unsigned arithmetic: a timestamp
// far outside the trace lands somewhere far away rather than in UB.
inline int64_t shift_ns(uint64_t ns, int64_t offset, int64_t base) {
  return static_cast<int64_t>(ns + static_cast<uint64_t>(offset) - static_cast<uint64_t>(base));
}

}  // namespace proflaunch::tools::timeline
