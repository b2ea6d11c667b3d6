#include "preload/writer/writer_control.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>

namespace proflaunch::writer {

Control g_control;

__thread __attribute__((tls_model("initial-exec"))) bool tls_on_writer_thread = false;

std::atomic<const WriterTask*> g_tasks[kMaxTasks];

long futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) noexcept {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

void wake_waiters() noexcept { futex(&g_control.completed, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr); }

}  // namespace proflaunch::writer
