// The flight recorder (proflaunch --ring=DURATION): the process records all
// along, but the writer keeps its compressed Events chunks in memory instead
// of the part file, and lets the oldest go once they are older than the
// duration or the kept chunks exceed the byte bound. Every definition is
// kept (they are few: strings, kernels, threads, APIs). A dump writes the
// kept chunks out as one capture window named after its trigger, preceded by
// the state they need: the memory blocks alive before the oldest kept
// record and the live communicators, as carried records.
//
// The writer thread alone uses it: no lock. It decides what is kept and
// builds the bytes of a dump; the writer encodes and appends them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "formats/records.h"
#include "preload/capture/live_set.h"

namespace proflaunch::capture {

struct KeptChunk {
  std::vector<uint8_t> encoded;  // a whole Events chunk, header and frame
  std::vector<format::MemoryOperationRecord> memory;  // its acquires and releases, in order
  uint64_t first_ns = 0;  // the earliest time among its records
  uint64_t last_ns = 0;   // when it was sealed
  uint64_t records = 0;   // event records in it
  size_t bytes() const noexcept {
    return encoded.size() + memory.size() * sizeof(format::MemoryOperationRecord);
  }
};

struct RingStats {
  uint64_t kept_bytes = 0;
  uint64_t peak_bytes = 0;   // never above the bound (one chunk more than it at most while sealing)
  uint64_t evicted_chunks = 0;
  uint64_t evicted_records = 0;
  uint64_t dumps = 0;
  uint64_t dumped_records = 0;
};

class FlightRecorder {
 public:
  void configure(uint64_t keep_ns, uint64_t max_bytes) noexcept {
    keep_ns_ = keep_ns;
    max_bytes_ = max_bytes;
  }
  bool enabled() const noexcept { return keep_ns_ != 0; }

  // Keeps a sealed chunk (taken by move), then lets go of what is older than
  // the duration (measured back from `now_ns`) or beyond the byte bound.
  // False when out of memory: the chunk is dropped and counted by the caller.
  bool keep(KeptChunk&& chunk, uint64_t now_ns) noexcept;

  // Lets go of chunks older than the duration at `now_ns`.
  void expire(uint64_t now_ns) noexcept;

  const std::deque<KeptChunk>& chunks() const noexcept { return chunks_; }
  // When the first kept record began (now when nothing is kept).
  uint64_t window_begin_ns(uint64_t now_ns) const noexcept;
  // The blocks alive before the oldest kept chunk.
  std::vector<format::MemoryOperationRecord> blocks_before() const { return before_.blocks(); }

  // A new section (after a failed exec): nothing kept, nothing before.
  void reset() noexcept {
    chunks_.clear();
    before_.clear();
    stats_ = RingStats{};
  }

  // After a dump wrote every kept chunk: they are let go (their memory
  // operations move into the state before the next one).
  void dumped() noexcept;

  const RingStats& stats() const noexcept { return stats_; }
  uint64_t max_bytes() const noexcept { return max_bytes_; }

 private:
  void evict_oldest() noexcept;

  uint64_t keep_ns_ = 0;
  uint64_t max_bytes_ = 0;
  std::deque<KeptChunk> chunks_;
  MemoryBlockSet before_;
  RingStats stats_;
};

// The first trigger a drained record sets off, or 0: a failed device
// allocation for lack of memory (MemoryOperation acquire with result 2, the
// same code in CUDA's driver and runtime and in HIP), or a sticky error
// (illegal address, launch failure, ... : codes 700-719 of the driver,
// runtime and HIP that leave the context unusable).
format::CaptureTrigger trigger_of_record(const void* record, uint16_t bytes) noexcept;

}  // namespace proflaunch::capture
