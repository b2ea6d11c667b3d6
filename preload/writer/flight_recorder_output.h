// The writer's flight-recorder mode (proflaunch --ring): the staged events
// of a section are sealed into chunks the FlightRecorder keeps
// (flight_recorder.h) instead of being written, the drained records are
// watched for what sets off a dump, and a dump writes what is kept as one
// capture window: its begin, the state carried into it (memory blocks alive
// before its oldest record, live communicators: capture/carried_state.h),
// the kept chunks, its end. Writer thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "formats/records.h"
#include "preload/writer/chunk_builder.h"
#include "preload/writer/flight_recorder.h"
#include "preload/writer/section_output.h"

namespace proflaunch::capture {

class FlightRecorderOutput {
 public:
  void configure(uint64_t keep_ns, uint64_t max_bytes) noexcept { kept_.configure(keep_ns, max_bytes); }
  bool enabled() const noexcept { return kept_.enabled(); }

  // A new section (after a failed exec): nothing kept, nothing dumped yet.
  void reset() noexcept;

  // A drained record: its memory operation is remembered with its chunk, its
  // begin time widens the chunk's, and it may set off a dump.
  void note(const void* record, uint16_t bytes, uint64_t now) noexcept;

  // A record a writer task appended: state the dumps must carry (the GPU
  // timing backend in use, written once at its start, long gone from the
  // ring by the time of a dump) is remembered.
  void note_task_record(const void* record, uint16_t bytes) noexcept;

  // Seals the staged records into a kept chunk (the definitions they name
  // are kept for good, all of them, for every dump's file).
  void keep(EventChunkBuilder& staged, SectionOutput& out) noexcept;

  // The dump a drained record set off since the last call (0: none).
  format::CaptureTrigger take_trigger() noexcept;

  // Writes what is kept as one window named after `trigger`. The caller
  // kept what was staged first; `staging` is empty and used for the dump's
  // own records.
  void dump(format::CaptureTrigger trigger, EventChunkBuilder& staging, SectionOutput& out) noexcept;

  // The part file of a ring section starts with ProcessInfo and every
  // definition kept so far; later dumps add the definitions made since.
  bool definitions_written(SectionOutput& out) noexcept;

  // The verbose line's flight-recorder half.
  void report(uint32_t pid) const noexcept;

 private:
  void ask_dump(format::CaptureTrigger trigger) noexcept;
  void stage(const void* record, uint16_t bytes) noexcept;
  bool write_staged() noexcept;
  static void carry_into_dump(const void* record, uint16_t bytes);

  FlightRecorder kept_;
  std::vector<format::MemoryOperationRecord> chunk_memory_;
  // The latest GpuTimingInfo of each source (none, events, CUPTI), carried
  // into every dump.
  format::GpuTimingInfoRecord timing_info_[4]{};
  uint64_t chunk_first_ns_ = 0;
  uint64_t memory_overflow_ = 0;
  std::vector<uint8_t> all_definitions_;
  size_t definitions_in_file_ = 0;
  format::CaptureTrigger pending_dump_{};
  bool oom_dumped_ = false;
  bool sticky_dumped_ = false;
  uint32_t dump_index_ = 0;
  // While a dump is written: where its own records go.
  uint32_t writer_tid_ = 0;
  uint64_t dump_begin_ns_ = 0;
  EventChunkBuilder* staging_ = nullptr;
  SectionOutput* out_ = nullptr;
  static FlightRecorderOutput* dumping_;
};

}  // namespace proflaunch::capture
