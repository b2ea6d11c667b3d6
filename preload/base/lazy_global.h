// A global of the shim whose type needs a constructor at run time (a deque,
// an unordered_map): built on first use, never destroyed.
//
// The shim has no dynamic initializers (tests/unit/preload check it in the
// built library), for two reasons:
//  - its constructor (entry.cpp) may start the writer thread, and the loader
//    runs the library's other initializers after it, in link order: a global
//    built there would be built under the writer's feet (ThreadSanitizer saw
//    the writer read one such deque while the constructor zeroed it);
//  - hooks run during and after static destruction.
// Plain globals are constinit; the others are one of these.
#pragma once

#include <mutex>
#include <new>

namespace proflaunch {

template <typename T>
class LazyGlobal {
 public:
  constexpr LazyGlobal() = default;
  LazyGlobal(const LazyGlobal&) = delete;
  LazyGlobal& operator=(const LazyGlobal&) = delete;

  T& operator*() noexcept {
    std::call_once(built_, [this] { new (storage_) T(); });
    return *std::launder(reinterpret_cast<T*>(storage_));
  }
  T* operator->() noexcept { return &**this; }

 private:
  std::once_flag built_;
  alignas(T) unsigned char storage_[sizeof(T)]{};
};

}  // namespace proflaunch
