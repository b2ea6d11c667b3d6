#include "probe.h"

__attribute__((visibility("default"))) void probe_event(uint64_t value) {
  // An empty asm keeps the call from being optimized into nothing.
  __asm__ volatile("" : : "r"(value) : "memory");
}
