// The memory blocks alive in the process, followed while capture windows
// come and go (--capture-range, --steps, --delay, --ring ...): at a window's
// start they are written as carried MemoryOperation acquires, so that the
// window's memory timeline starts from the right live set and a block
// allocated before the window and freed inside it is paired. Only kept
// when recording is not continuous; an allocation hook feeds it the record
// it made (or would have made) for the call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "formats/records.h"

namespace proflaunch::capture {

// A set of live blocks, keyed by what names a block in its name space
// (allocations, VMM ranges and mappings by address, physical memory by
// handle). Not synchronized. Shared by the process's live set below and the
// flight recorder (which follows the blocks alive at its oldest record).
class MemoryBlockSet {
 public:
  MemoryBlockSet();
  ~MemoryBlockSet();
  // An acquire adds the block, a release removes it; failed calls, trims and
  // access changes leave the set unchanged. False when out of memory.
  bool note(const format::MemoryOperationRecord& record) noexcept;
  // The blocks, as their acquire records.
  std::vector<format::MemoryOperationRecord> blocks() const;
  size_t size() const noexcept;
  void clear() noexcept;

 private:
  struct Map;
  std::unique_ptr<Map> map_;
};

// Whether hooks must feed the live set (a capture mode other than the whole run).
bool follows_memory() noexcept;

// A completed memory call: an acquire adds the block, a release removes it.
// Failed calls, trims and access changes leave it unchanged.
void note_memory_operation(const format::MemoryOperationRecord& record) noexcept;

// The blocks alive now, as acquire records (their original fields).
std::vector<format::MemoryOperationRecord> live_blocks();

// How many acquires could not be followed (out of memory); reported once.
uint64_t live_set_overflow() noexcept;

void live_set_lock_before_fork() noexcept;
void live_set_unlock_after_fork() noexcept;
void enable_live_set() noexcept;
// In a fork child, under the fork lock: the parent's blocks are not the child's.
void live_set_reset_in_child() noexcept;

}  // namespace proflaunch::capture
