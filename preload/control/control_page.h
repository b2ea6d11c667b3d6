// Capture on demand (proflaunch ctl): the channel between a job's launcher
// and its traced processes. The launcher serves the user's `proflaunch ctl`
// on a unix socket (launcher/control_server.h) and passes each command to
// the processes through one shared page, <parts dir>/control, that every
// shim maps at start (a fork child inherits the mapping; an exec'd image
// maps it again). No descriptor stays open in the program, and a process
// reads the page with plain loads on its writer thread, once per drain.
//
// Protocol: the launcher writes `command`, `target_pid` and `duration_ns`,
// then bumps `generation` (release). A process whose writer sees a new
// generation acts on it if it is the target (0: every process), then stores
// the generation in its slot's `acked` once the effect is on disk (the
// window opened or closed and flushed, the dump written). One command at a
// time: the launcher waits for the acks (or for the processes to die).
//
// No allocation, no libc beyond open/mmap: shared by the shim and launcher.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace proflaunch::control {

inline constexpr uint32_t kPageMagic = 0x4C544350;  // "PCTL"
inline constexpr uint32_t kPageVersion = 1;
inline constexpr size_t kMaxSlots = 1024;
inline constexpr const char* kPageName = "control";

enum class Command : uint32_t { kNone = 0, kStart = 1, kStop = 2, kDump = 3, kFlush = 4 };

// What a process is doing, as its writer last said in its slot. kFree until
// the writer runs: such a process has recorded nothing and cannot act yet.
enum class SlotState : uint32_t { kFree = 0, kRecording = 1, kPaused = 2, kRing = 3, kExited = 4 };

struct Slot {
  std::atomic<uint32_t> pid;    // 0: free (a slot of a dead pid may be taken again)
  std::atomic<uint32_t> acked;  // the last generation this process acted on
  std::atomic<uint32_t> state;  // SlotState
  std::atomic<int32_t> rank;    // RANK of the process, -1 if none
};
static_assert(sizeof(Slot) == 16);

struct Page {
  uint32_t magic;
  uint32_t version;
  std::atomic<uint32_t> generation;
  std::atomic<uint32_t> command;     // Command
  std::atomic<uint32_t> target_pid;  // 0: every process of the job
  uint32_t reserved;
  std::atomic<uint64_t> duration_ns;  // kStart: close the window after this long (0: on stop)
  Slot slots[kMaxSlots];
};
static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free);

// Maps <parts_dir>/control. nullptr when it does not exist or is not a page
// (a run without a control channel, a damaged file). The mapping is kept for
// the life of the process.
Page* map_page(const char* parts_dir) noexcept;

// Takes a slot for `pid` (free, or held by a pid that no longer exists).
// nullptr when every slot is held.
Slot* take_slot(Page* page, uint32_t pid, int32_t rank) noexcept;

}  // namespace proflaunch::control
