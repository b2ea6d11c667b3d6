// The loaded objects' code ranges and unwind tables, as a signal handler may
// read them. The stacks layer's rule cache asks dl_iterate_phdr on a miss,
// which takes the loader's lock: a sample that interrupts a thread inside
// dlopen would deadlock there. So the writer thread (and the start) copies
// the list into one of two fixed tables and publishes it; the handler looks a
// pc up under a sequence number and gives up (counts the sample as unsafe)
// if the table changed while it read.
#pragma once

#include <cstdint>

namespace proflaunch::sampling {

struct CodeRange {
  uintptr_t start = 0;
  uintptr_t end = 0;
  const uint8_t* eh_frame_hdr = nullptr;  // nullptr: the object has none
};

enum class RangeLookup { kFound, kNotFound, kBusy };

// Async-signal-safe.
RangeLookup find_code_range(uintptr_t pc, CodeRange* out) noexcept;

// Changes whenever a new table is published: rules cached against an older
// one are dropped.
uint32_t code_ranges_generation() noexcept;

// Writer thread / start: re-reads the loaded objects when the loader's
// counters moved (always when `force`). Not async-signal-safe.
void refresh_code_ranges(bool force) noexcept;

}  // namespace proflaunch::sampling
