// State a fork child starts over with, without touching the parent's copy.
//
// In a fork child only the forking thread exists; a container the writer
// thread was changing at that moment may be half-updated, so the child never
// clears or destroys it: it constructs a fresh one in its place. The old
// object's heap blocks are then unreferenced. In a program built with
// AddressSanitizer, LeakSanitizer would report them at the child's exit and
// change its exit status. So the old object's bytes (its pointers) are kept
// here, reachable from a global list, and nothing is reported or freed.
#pragma once

#include <cstddef>
#include <new>

namespace proflaunch {

// Keeps a copy of `size` bytes at `object` reachable for the process's life.
void keep_after_fork(const void* object, size_t size) noexcept;

// Replaces `object` by a default-constructed one, keeping the old bytes.
template <typename T>
void restart_after_fork(T& object) noexcept {
  keep_after_fork(&object, sizeof object);
  new (&object) T();
}

}  // namespace proflaunch
