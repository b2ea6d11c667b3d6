// Remembers which handles of one kind are alive, so that a stale or garbage
// handle gets CUDA_ERROR_INVALID_HANDLE instead of a dereference.
#pragma once

#include <mutex>
#include <unordered_set>

namespace simgpu {

template <class T>
class HandleSet {
 public:
  void insert(T* handle) {
    std::lock_guard lock(mutex_);
    live_.insert(handle);
  }
  // Returns false when the handle was not alive (a second destroy, say).
  bool erase(T* handle) {
    std::lock_guard lock(mutex_);
    return live_.erase(handle) != 0;
  }
  bool contains(const void* handle) const {
    std::lock_guard lock(mutex_);
    return live_.count(static_cast<T*>(const_cast<void*>(handle))) != 0;
  }
  template <class Fn>
  void for_each(Fn&& fn) const {
    std::lock_guard lock(mutex_);
    for (T* handle : live_) fn(handle);
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_set<T*> live_;
};

}  // namespace simgpu
