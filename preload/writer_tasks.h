// Work other parts of the shim hand to the writer thread (the GPU timing
// backend resolves events there: off the hot path, on a thread that is
// guarded for life and has every signal blocked).
//
// Each cycle the writer calls before_drain() of every task, drains the
// threads' rings, then calls run(). A task that snapshots its own queues in
// before_drain() and only processes what the snapshot covered emits its
// records after the records that caused them, in file order.
#pragma once

#include <cstdint>

namespace proflaunch {

class WriterRecordSink {
 public:
  // Appends one whole record (header included) to the section's events.
  // False when the record could not be staged (it is counted as lost).
  virtual bool append(const void* record, uint16_t bytes) noexcept = 0;

 protected:
  ~WriterRecordSink() = default;
};

struct WriterTask {
  void (*before_drain)() noexcept;
  // `final` on the last cycle of a section (exit, exec): resolve what can be
  // resolved now; nothing runs after it in this section.
  void (*run)(WriterRecordSink& sink, bool final) noexcept;
  // In a fork child, before its first record: forget the parent's state.
  void (*reset_in_child)() noexcept;
};

// Registers a task for the life of the process (a few at most). Returns false
// when the table is full. (To make tasks run now, writer_flush_and_wait.)
bool writer_register_task(const WriterTask* task) noexcept;

}  // namespace proflaunch
