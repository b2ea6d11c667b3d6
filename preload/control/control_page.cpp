#include "preload/control/control_page.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace proflaunch::control {

Page* map_page(const char* parts_dir) noexcept {
  if (parts_dir == nullptr || parts_dir[0] == '\0') return nullptr;
  char path[4200];
  if (std::snprintf(path, sizeof path, "%s/%s", parts_dir, kPageName) >= static_cast<int>(sizeof path)) return nullptr;
  const int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return nullptr;
  struct stat info {};
  void* mapped = MAP_FAILED;
  if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && static_cast<size_t>(info.st_size) >= sizeof(Page))
    mapped = mmap(nullptr, sizeof(Page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (mapped == MAP_FAILED) return nullptr;
  auto* page = static_cast<Page*>(mapped);
  if (page->magic != kPageMagic || page->version != kPageVersion) {
    munmap(mapped, sizeof(Page));
    return nullptr;
  }
  return page;
}

Slot* take_slot(Page* page, uint32_t pid, int32_t rank) noexcept {
  if (page == nullptr) return nullptr;
  for (Slot& slot : page->slots) {
    uint32_t holder = slot.pid.load(std::memory_order_acquire);
    if (holder == pid) {  // an exec'd image continues its pid's slot
      slot.rank.store(rank, std::memory_order_relaxed);
      slot.state.store(static_cast<uint32_t>(SlotState::kFree), std::memory_order_release);
      return &slot;
    }
    const bool free = holder == 0 || (kill(static_cast<pid_t>(holder), 0) != 0 && errno == ESRCH);
    if (!free || !slot.pid.compare_exchange_strong(holder, pid, std::memory_order_acq_rel)) continue;
    // Acting only on commands from now on.
    slot.acked.store(page->generation.load(std::memory_order_acquire), std::memory_order_release);
    slot.rank.store(rank, std::memory_order_relaxed);
    slot.state.store(static_cast<uint32_t>(SlotState::kFree), std::memory_order_release);
    return &slot;
  }
  return nullptr;
}

}  // namespace proflaunch::control
