// A TimelineSink that hands every event to another sink on a thread of its
// own, so that encoding and writing the output (about half of a
// conversion's time) run beside reading, joining and placing the input.
//
// Events are copied, in order, into batches: the copies keep what the sink
// contract lets the caller free after the call (text without an iid, arg
// arrays, counter values, string lists); interned text (iid != 0) outlives
// the conversion and is passed on as it is. At most kBatches batches exist,
// so memory stays bounded: the timeline waits when the writing thread falls
// behind. The inner sink sees exactly the calls, in the order, that it would
// have seen directly, all from the one writing thread; finish() waits for
// that thread and then finishes the inner sink on the caller's thread.
// While it waits for a free batch, the caller's thread runs the inner
// sink's help() instead of sleeping where there is work to share.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tools/proftrace/timeline/timeline_events.h"

namespace proflaunch::tools::timeline {

class ThreadedSink final : public TimelineSink {
 public:
  explicit ThreadedSink(TimelineSink& inner);
  ~ThreadedSink() override;
  ThreadedSink(const ThreadedSink&) = delete;
  ThreadedSink& operator=(const ThreadedSink&) = delete;

  void begin(const TimelineInfo& info) override;
  void process(const ProcessTrack& track) override;
  void thread(const ThreadTrack& track) override;
  void slice(const Slice& slice) override;
  void instant(const Instant& instant) override;
  void async_slice(const AsyncSlice& slice) override;
  void counter(const CounterSample& sample) override;
  bool finish(std::string* error) override;

  // The inner sink's state as of the last batch it took (exact after finish).
  bool failed() const override { return failed_.load(std::memory_order_relaxed); }
  uint64_t events() const override { return events_.load(std::memory_order_relaxed); }
  uint64_t bytes() const override { return bytes_.load(std::memory_order_relaxed); }

  static constexpr size_t kBatches = 16;

  struct Batch;  // threaded_sink.cpp

 private:
  // The batch being filled; waits for a free one when every batch is queued.
  Batch& filling();
  // The batch being filled, once it has room for an event with `args` args
  // and `values` counter values (handing a full one over first).
  Batch& room_for(size_t args, size_t values);
  // Queues the batch being filled for the writing thread (if it has events).
  void hand_over();
  void run();  // the writing thread
  void replay(Batch& batch);
  void stop();

  TimelineSink& inner_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<Batch>> full_;  // queued, oldest first
  std::vector<std::unique_ptr<Batch>> free_;
  std::unique_ptr<Batch> filling_;
  size_t batches_ = 0;
  bool closing_ = false;  // no more batches will come
  bool stopped_ = false;
  std::string thread_error_;  // an exception the writing thread caught
  std::atomic<bool> failed_{false};
  std::atomic<uint64_t> events_{0};
  std::atomic<uint64_t> bytes_{0};
  Args replay_args_;  // the writing thread's
};

}  // namespace proflaunch::tools::timeline
