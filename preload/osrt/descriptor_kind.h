// What a file descriptor is, asked only when a call on it is recorded (the
// fast path never looks): fstat, and for anonymous inodes (eventfd, epoll,
// timerfd, signalfd) the name /proc/self/fd gives them.
#pragma once

#include "formats/records.h"

namespace proflaunch::osrt {

format::WaitObjectKind descriptor_kind(int fd) noexcept;

}  // namespace proflaunch::osrt
