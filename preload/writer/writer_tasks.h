// Work other parts of the shim hand to the writer thread (the GPU timing
// backend resolves events there: off the hot path, on a thread that is
// guarded for life and has every signal blocked).
//
// Each cycle the writer calls before_drain() of every task, drains the
// threads' rings, then calls run(). A task that snapshots its own queues in
// before_drain() and only processes what the snapshot covered emits its
// records after the records that caused them, in file order.
#pragma once

#include <atomic>
#include <cstdint>

namespace proflaunch {

class WriterRecordSink {
 public:
  // Appends one whole record (header included) to the section's events.
  // False when the record could not be staged (it is counted as lost).
  virtual bool append(const void* record, uint16_t bytes) noexcept = 0;
  // The same, as a record of thread `tid` (under its ThreadBatch): records a
  // task writes on behalf of a program thread (CPU samples, preload/sampling).
  virtual bool append_for_thread(uint32_t tid, const void* record, uint16_t bytes) noexcept = 0;

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

// A GPU runtime tears its contexts down when the process exits, from an
// atexit handler of its own, and the shim's destructor (the section's final
// cycle) comes after it: events queried then are gone (seen on an H200,
// driver 580). A task whose work needs the runtime calls this once it has
// work, so after the runtime initialized: the atexit handler registered then
// runs before the runtime's teardown, and makes the writer cycle until
// `outstanding` (the task's count of work it still holds, which it keeps up
// to date at the end of each run) reads 0, waiting at most as long as the
// final cycle would for work the GPU has not finished. Cheap after the first
// call for the same counter.
void writer_resolve_before_runtime_exit(std::atomic<uint64_t>* outstanding) noexcept;

// A task's count of outstanding runtime work, registered with
// writer_resolve_before_runtime_exit the first time work is noted (one
// relaxed load after that: hot paths call it).
class RuntimeWorkAtExit {
 public:
  void work_begins() noexcept {
    if (registered_.load(std::memory_order_relaxed)) return;
    registered_.store(true, std::memory_order_relaxed);
    writer_resolve_before_runtime_exit(&outstanding_);
  }
  // The writer, at the end of each pass (0 in a fork child).
  void set_outstanding(uint64_t count) noexcept { outstanding_.store(count, std::memory_order_release); }

 private:
  std::atomic<uint64_t> outstanding_{0};
  std::atomic<bool> registered_{false};
};

}  // namespace proflaunch
