#include "preload/base/fork_leftovers.h"

#include <cstdlib>
#include <cstring>

namespace proflaunch {
namespace {

struct Leftover {
  Leftover* next;
  size_t size;
  // followed by `size` bytes
};

// Written only in a fork child, by its only thread.
Leftover* g_leftovers = nullptr;

}  // namespace

void keep_after_fork(const void* object, size_t size) noexcept {
  // glibc's malloc is usable in a fork child (its locks are reset at fork).
  auto* leftover = static_cast<Leftover*>(std::malloc(sizeof(Leftover) + size));
  if (leftover == nullptr) return;  // only a leak report is at stake
  leftover->next = g_leftovers;
  leftover->size = size;
  std::memcpy(leftover + 1, object, size);
  g_leftovers = leftover;
}

}  // namespace proflaunch
