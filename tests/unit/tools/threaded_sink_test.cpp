// ThreadedSink: the inner sink sees the same calls, in the same order, with
// the same content, as it would directly, although the caller reuses (and
// scribbles over) every buffer it handed over; failures and exceptions of
// the inner sink reach the caller.
#include "tools/proftrace/timeline/threaded_sink.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace proflaunch::tools::timeline {
namespace {

// Writes every call down as text: what an emitter could see.
class RecordingSink : public TimelineSink {
 public:
  void begin(const TimelineInfo& info) override {
    log_ += "begin " + std::to_string(info.base_ns) + (info.metadata ? " meta" : "") + "\n";
    calling_thread();
  }
  void process(const ProcessTrack& t) override {
    log_ += "process " + std::to_string(t.pid) + " " + std::string(t.name) + " " + std::to_string(t.sort_index) + "\n";
    calling_thread();
  }
  void thread(const ThreadTrack& t) override {
    log_ += "thread " + std::to_string(t.pid) + "/" + std::to_string(t.tid) + " " + std::string(t.name) + " " +
            std::to_string(t.sort_index) + " " + std::to_string(static_cast<int>(t.kind)) + "\n";
    calling_thread();
  }
  void slice(const Slice& s) override {
    log_ += "slice " + track(s.track) + " " + std::to_string(s.begin_ns) + ".." + std::to_string(s.end_ns) + " " +
            str(s.category) + " " + str(s.name) + " out " + std::to_string(s.flow_out) + " in " +
            std::to_string(s.flow_in) + " stack " + (s.stack.empty() ? "-" : std::to_string(s.stack.api)) +
            args(s.args) + "\n";
    event();
  }
  void instant(const Instant& i) override {
    log_ += "instant " + track(i.track) + " " + std::to_string(i.ns) + " " +
            std::to_string(static_cast<int>(i.scope)) + " " + str(i.category) + " " + str(i.name) + args(i.args) + "\n";
    event();
  }
  void async_slice(const AsyncSlice& s) override {
    log_ += "async " + track(s.track) + " " + std::to_string(s.begin_ns) + ".." + std::to_string(s.end_ns) + " " +
            str(s.category) + " " + str(s.name) + " id " + std::string(s.id) + args(s.args) + "\n";
    event();
  }
  void counter(const CounterSample& c) override {
    log_ += "counter " + std::to_string(c.pid) + " " + std::to_string(c.ns) + " " + str(c.name);
    for (size_t i = 0; i < c.value_count; ++i)
      log_ += " " + std::string(c.values[i].key) + "=" + std::to_string(c.values[i].value);
    log_ += "\n";
    event();
  }
  bool finish(std::string* error) override {
    log_ += "finish\n";
    finished_on_ = std::this_thread::get_id();
    if (fail_at_ != 0 && events_ >= fail_at_) {
      *error = "disk full";
      return false;
    }
    return true;
  }
  bool failed() const override { return fail_at_ != 0 && events_ >= fail_at_; }
  uint64_t events() const override { return events_; }
  uint64_t bytes() const override { return log_.size(); }

  std::string log_;
  uint64_t events_ = 0;
  uint64_t fail_at_ = 0;     // failed() once this many events were written
  uint64_t throw_at_ = 0;    // throws at this event
  std::vector<std::thread::id> threads_;
  std::thread::id finished_on_;

 private:
  void calling_thread() {
    const auto id = std::this_thread::get_id();
    if (threads_.empty() || threads_.back() != id) threads_.push_back(id);
  }
  void event() {
    calling_thread();
    ++events_;
    if (throw_at_ != 0 && events_ == throw_at_) throw std::runtime_error("encoder broke");
  }
  static std::string track(TrackRef t) { return std::to_string(t.pid) + "/" + std::to_string(t.tid); }
  static std::string str(Str s) { return "'" + std::string(s.text) + "'#" + std::to_string(s.iid); }
  static std::string args(const Args* a) {
    if (a == nullptr) return " noargs";
    std::string text = " args{";
    for (const Arg& arg : *a) {
      text += std::string(arg.key) + ":";
      switch (arg.type) {
        case ArgType::kInt: text += "i" + std::to_string(arg.i); break;
        case ArgType::kUint: text += "u" + std::to_string(arg.u); break;
        case ArgType::kDouble: text += "d" + std::to_string(arg.d); break;
        case ArgType::kBool: text += arg.i ? "true" : "false"; break;
        case ArgType::kString: text += str(arg.s); break;
        case ArgType::kDim3:
          text += "[" + std::to_string(arg.dim.x) + "," + std::to_string(arg.dim.y) + "," +
                  std::to_string(arg.dim.z) + "]";
          break;
        case ArgType::kStringList:
          text += "[";
          for (uint32_t i = 0; i < arg.list_size; ++i) text += str(arg.list[i]) + ";";
          text += "]";
          break;
        case ArgType::kStack: text += "stack"; break;
      }
      text += ",";
    }
    return text + "}";
  }
};

// Drives a sink with every kind of event, from buffers it overwrites after
// each call (as the timeline does), enough of them to fill many batches:
// long texts, string lists, counters with more values than a batch holds.
void drive(TimelineSink& sink, size_t slices) {
  static const std::string interned = "interned kernel name";  // outlives the conversion
  static const TraceMetadata metadata;
  sink.begin(TimelineInfo{12345, &metadata});
  std::string text;
  std::vector<Str> list;
  std::vector<CounterSample::Value> values;
  Args args;
  for (size_t i = 0; i < slices; ++i) {
    text = "process " + std::to_string(i);
    if (i % 1000 == 0) sink.process(ProcessTrack{static_cast<uint32_t>(i), text, -static_cast<int64_t>(i)});
    if (i % 700 == 0) sink.thread(ThreadTrack{1, static_cast<uint32_t>(i), text, 3, ThreadKind::kTrack});

    args.clear();
    text = "transient value " + std::to_string(i);
    args.add_uint("correlation", i);
    args.add_int("result", -static_cast<int64_t>(i));
    args.add_double("blocks per SM", i / 7.0);
    args.add_bool("async", i % 2 == 0);
    args.add_string("kernel", Str{interned, 7});
    args.add_string("value", Str{text, 0});
    args.add_dim3("grid", format::Dim3{static_cast<uint32_t>(i), 2, 3});
    if (i % 97 == 0) {
      list.clear();
      for (size_t k = 0; k < 5; ++k) list.push_back(Str{text, 0});
      list.push_back(Str{interned, 7});
      args.add_list("members", list.data(), list.size());
    }
    if (i % 13 == 0) args.add_text("owned", "owned text " + std::to_string(i));
    if (i % 5 == 0) args.add_stack();
    if (i % 31 == 0) {  // as many args as an event may have
      while (args.size() < Args::kCapacity) args.add_uint("filler", args.size());
    }
    // Names that fill the text blocks, and now and then one too long for a block.
    std::string name = i % 300 == 0 ? std::string(20000, 'x') + std::to_string(i)
                       : i % 3 == 0 ? std::string(1000, 'y') + std::to_string(i)
                                    : "slice " + std::to_string(i);
    Slice slice;
    slice.track = TrackRef{1, static_cast<uint32_t>(i % 4)};
    slice.begin_ns = static_cast<int64_t>(i) * 10;
    slice.end_ns = slice.begin_ns + 5;
    slice.category = Str{"kernel", 3};
    slice.name = Str{name, 0};
    slice.flow_out = i;
    slice.flow_in = i + 1;
    slice.args = &args;
    sink.slice(slice);
    std::memset(name.data(), '?', name.size());
    std::memset(text.data(), '!', text.size());
    for (auto& entry : list) entry = Str{"scribbled", 0};

    if (i % 50 == 0) {
      text = "instant " + std::to_string(i);
      sink.instant(Instant{TrackRef{2, 2}, static_cast<int64_t>(i), InstantScope::kProcess, Str{"sync", 4},
                           Str{text, 0}, i % 100 == 0 ? nullptr : &args});
      text = "range id " + std::to_string(i);
      std::string range = "range " + std::to_string(i);
      sink.async_slice(AsyncSlice{TrackRef{3, 3}, static_cast<int64_t>(i), static_cast<int64_t>(i) + 9,
                                  Str{"nvtx", 0}, Str{range, 0}, text, nullptr});
      std::memset(range.data(), '#', range.size());
    }
    if (i % 40 == 0) {
      values.clear();
      const size_t count = i % 4000 == 0 ? 5000 : 3;  // 5000: more than a batch's value array
      for (size_t k = 0; k < count; ++k) values.push_back(CounterSample::Value{"key", i * 1000 + k});
      text = "device memory " + std::to_string(i);
      sink.counter(CounterSample{1, static_cast<int64_t>(i), Str{text, 0}, values.data(), values.size()});
      for (auto& value : values) value.value = 0;
    }
  }
}

TEST(ThreadedSink, InnerSinkSeesWhatItWouldHaveSeenDirectly) {
  constexpr size_t kSlices = 9000;  // several batches, several full of args
  RecordingSink direct;
  drive(direct, kSlices);
  std::string error;
  ASSERT_TRUE(direct.finish(&error));

  RecordingSink inner;
  ThreadedSink threaded(inner);
  drive(threaded, kSlices);
  ASSERT_TRUE(threaded.finish(&error)) << error;

  ASSERT_EQ(inner.log_.size(), direct.log_.size());
  EXPECT_TRUE(inner.log_ == direct.log_) << "the logs differ first at byte "
                                         << std::mismatch(inner.log_.begin(), inner.log_.end(),
                                                          direct.log_.begin()).first - inner.log_.begin();
  EXPECT_EQ(threaded.events(), direct.events_);
  EXPECT_EQ(threaded.bytes(), direct.log_.size());
  EXPECT_FALSE(threaded.failed());
  // Every event came from one thread, not the caller's; finish from the caller's.
  ASSERT_EQ(inner.threads_.size(), 1u);
  EXPECT_NE(inner.threads_.front(), std::this_thread::get_id());
  EXPECT_EQ(inner.finished_on_, std::this_thread::get_id());
}

TEST(ThreadedSink, InnerFailureStopsTheCallerAndFinishReportsIt) {
  RecordingSink inner;
  inner.fail_at_ = 3000;
  ThreadedSink threaded(inner);
  // The caller learns of the failure a few batches late, and stops (as the
  // converter's keep_going does).
  size_t fed = 0;
  static const TraceMetadata metadata;
  threaded.begin(TimelineInfo{0, &metadata});
  Args args;
  args.add_uint("correlation", 1);
  while (!threaded.failed() && fed < 1'000'000) {
    Slice slice;
    slice.track = TrackRef{1, 1};
    slice.begin_ns = static_cast<int64_t>(fed);
    slice.end_ns = slice.begin_ns + 1;
    slice.name = Str{"s", 0};
    slice.args = &args;
    threaded.slice(slice);
    ++fed;
  }
  EXPECT_LT(fed, 1'000'000u);
  std::string error;
  EXPECT_FALSE(threaded.finish(&error));
  EXPECT_EQ(error, "disk full");
  EXPECT_TRUE(threaded.failed());
  // Nothing was written past the failure.
  EXPECT_EQ(inner.events_, 3000u);
}

TEST(ThreadedSink, AnExceptionInTheWritingThreadBecomesAnError) {
  RecordingSink inner;
  inner.throw_at_ = 1500;
  ThreadedSink threaded(inner);
  drive(threaded, 4000);
  std::string error;
  EXPECT_FALSE(threaded.finish(&error));
  EXPECT_NE(error.find("encoder broke"), std::string::npos) << error;
  EXPECT_TRUE(threaded.failed());
}

TEST(ThreadedSink, DestroyedUnfinishedJoinsItsThread) {
  RecordingSink inner;
  {
    ThreadedSink threaded(inner);
    drive(threaded, 3000);
  }  // no finish(): the caller gave up (an exception); nothing hangs
  EXPECT_EQ(inner.log_.find("finish"), std::string::npos);
}

// An inner sink whose writing stalls until the caller's thread has called
// help(): the caller fills every batch, finds none free, and must run
// help() instead of only sleeping (the stall gives up after 20 s, and the
// test then fails).
class StallingSink : public TimelineSink {
 public:
  void begin(const TimelineInfo&) override {}
  void process(const ProcessTrack&) override {}
  void thread(const ThreadTrack&) override {}
  void slice(const Slice&) override {
    if (events_++ == 0) {
      std::unique_lock<std::mutex> lock(mutex_);
      helped_ = changed_.wait_for(lock, std::chrono::seconds(20), [&] { return help_calls_ > 0; });
    }
  }
  void instant(const Instant&) override {}
  void async_slice(const AsyncSlice&) override {}
  void counter(const CounterSample&) override {}
  bool finish(std::string*) override { return true; }
  bool failed() const override { return false; }
  uint64_t events() const override { return events_; }
  uint64_t bytes() const override { return 0; }
  bool help() override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++help_calls_;
    help_thread_ = std::this_thread::get_id();
    changed_.notify_all();
    return false;  // nothing done: the caller then waits
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t events_ = 0;
  size_t help_calls_ = 0;
  bool helped_ = false;
  std::thread::id help_thread_;
};

TEST(ThreadedSink, TheCallerHelpsTheInnerSinkWhileEveryBatchIsQueued) {
  StallingSink inner;
  ThreadedSink threaded(inner);
  static const TraceMetadata metadata;
  threaded.begin(TimelineInfo{0, &metadata});
  const size_t slices = (ThreadedSink::kBatches + 2) * 1024;  // more than every batch holds
  for (size_t i = 0; i < slices; ++i) {
    Slice slice;
    slice.track = TrackRef{1, 1};
    slice.begin_ns = static_cast<int64_t>(i);
    slice.end_ns = slice.begin_ns + 1;
    slice.name = Str{"s", 0};
    threaded.slice(slice);
  }
  std::string error;
  ASSERT_TRUE(threaded.finish(&error)) << error;
  EXPECT_TRUE(inner.helped_) << "the writing thread stalled and nobody called help()";
  EXPECT_GE(inner.help_calls_, 1u);
  EXPECT_EQ(inner.help_thread_, std::this_thread::get_id());
  EXPECT_EQ(inner.events_, slices);
}

}  // namespace
}  // namespace proflaunch::tools::timeline
