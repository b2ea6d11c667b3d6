#include "tools/proftrace/timeline/threaded_sink.h"

#include <cstring>
#include <exception>
#include <system_error>
#include <type_traits>
#include <variant>

namespace proflaunch::tools::timeline {

static_assert(std::is_trivially_copyable_v<Arg>, "args are copied into batches as bytes");

// Events in arrival order and the copies they point to. The arrays never
// grow past their reserved size (a batch that is full is handed over), so a
// pointer into them stays valid until the batch is cleared.
struct ThreadedSink::Batch {
  static constexpr size_t kEvents = 1024;
  static constexpr size_t kArgs = 16 * 1024;
  static constexpr size_t kValues = 4 * 1024;
  static constexpr size_t kTextBlockBytes = 64 * 1024;

  struct Event {
    std::variant<TimelineInfo, ProcessTrack, ThreadTrack, Slice, Instant, AsyncSlice, CounterSample> what;
    uint32_t first_arg = 0;
    uint32_t arg_count = 0;
    bool has_args = false;
  };

  Batch() {
    events.reserve(kEvents);
    args.reserve(kArgs);
    values.reserve(kValues);
  }

  bool empty() const { return events.empty(); }
  // Room for one more event with `arg_count` args and `value_count` counter values.
  bool fits(size_t arg_count, size_t value_count) const {
    return events.size() < kEvents && args.size() + arg_count <= kArgs &&
           (value_count > kValues || values.size() + value_count <= kValues);
  }

  void clear() {
    events.clear();
    args.clear();
    values.clear();
    lists.clear();
    large_values.clear();
    large_texts.clear();
    block = 0;
    block_used = 0;
  }

  // `text` copied into the batch.
  std::string_view keep_text(std::string_view text) {
    if (text.empty()) return {};
    if (text.size() > kTextBlockBytes / 4) {
      large_texts.emplace_back(text);
      return large_texts.back();
    }
    if (blocks.empty() || block_used + text.size() > kTextBlockBytes) {
      if (!blocks.empty()) ++block;
      if (block == blocks.size()) blocks.push_back(std::make_unique<char[]>(kTextBlockBytes));
      block_used = 0;
    }
    char* at = blocks[block].get() + block_used;
    std::memcpy(at, text.data(), text.size());
    block_used += text.size();
    return {at, text.size()};
  }
  // Interned text outlives the conversion: kept as it is.
  Str keep(Str str) { return str.iid != 0 ? str : Str{keep_text(str.text), 0}; }

  // Copies `source` into `args` (and its strings into the batch); returns
  // where they start.
  uint32_t keep_args(const Args* source, uint32_t* count) {
    const auto first = static_cast<uint32_t>(args.size());
    *count = 0;
    if (source == nullptr) return first;
    // Copied whole (Arg is trivially copyable), then the text they point
    // to that is not interned.
    args.insert(args.end(), source->begin(), source->end());
    *count = static_cast<uint32_t>(source->size());
    for (Arg* kept = args.data() + first; kept != args.data() + args.size(); ++kept) {
      if (kept->type == ArgType::kString) {
        kept->s = keep(kept->s);
      } else if (kept->type == ArgType::kStringList) {
        std::vector<Str>& list = lists.emplace_back();
        list.reserve(kept->list_size);
        for (uint32_t i = 0; i < kept->list_size; ++i) list.push_back(keep(kept->list[i]));
        kept->list = list.data();
      }
    }
    return first;
  }

  // A slice, instant or async slice, its text and args copied in.
  template <typename Named>
  Named& keep_named(const Named& source) {
    Event& event = events.emplace_back();
    Named& kept = event.what.template emplace<Named>(source);  // one copy, in place
    kept.category = keep(source.category);
    kept.name = keep(source.name);
    kept.args = nullptr;
    event.has_args = source.args != nullptr;
    event.first_arg = keep_args(source.args, &event.arg_count);
    return kept;
  }

  std::vector<Event> events;
  std::vector<Arg> args;
  std::vector<CounterSample::Value> values;
  std::deque<std::vector<Str>> lists;  // string-list args (rare)
  std::deque<std::vector<CounterSample::Value>> large_values;  // a sample of more than kValues
  std::deque<std::string> large_texts;
  std::vector<std::unique_ptr<char[]>> blocks;  // kTextBlockBytes each, reused
  size_t block = 0;
  size_t block_used = 0;
};

ThreadedSink::ThreadedSink(TimelineSink& inner) : inner_(inner) {
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error&) {
    // No thread to be had: the caller's thread writes (see filling()).
  }
}

ThreadedSink::~ThreadedSink() { stop(); }

void ThreadedSink::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
    closing_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

ThreadedSink::Batch& ThreadedSink::filling() {
  if (filling_) return *filling_;
  std::unique_lock<std::mutex> lock(mutex_);
  const auto ready = [&] { return !free_.empty() || batches_ < kBatches; };
  while (!ready()) {
    // Every batch is queued: do some of the inner sink's work meanwhile
    // (compressing its output), else wait.
    lock.unlock();
    const bool helped = inner_.help();
    lock.lock();
    if (!helped) changed_.wait(lock, ready);
  }
  if (!free_.empty()) {
    filling_ = std::move(free_.back());
    free_.pop_back();
  } else {
    filling_ = std::make_unique<Batch>();
    ++batches_;
  }
  return *filling_;
}

ThreadedSink::Batch& ThreadedSink::room_for(size_t args, size_t values) {
  if (!filling().fits(args, values)) hand_over();
  return filling();
}

void ThreadedSink::hand_over() {
  if (!filling_ || filling_->empty()) return;
  if (!thread_.joinable()) {  // no writing thread: write here
    replay(*filling_);
    filling_->clear();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    full_.push_back(std::move(filling_));
  }
  changed_.notify_all();
}

namespace {

size_t arg_count(const Args* args) { return args == nullptr ? 0 : args->size(); }

template <typename Named>
const Named& with_args(Named& event, const Args* args) {
  event.args = args;
  return event;
}

}  // namespace

void ThreadedSink::begin(const TimelineInfo& info) {
  Batch* batch = &room_for(0, 0);
  batch->events.push_back(Batch::Event{info});
}

void ThreadedSink::process(const ProcessTrack& track) {
  Batch* batch = &room_for(0, 0);
  ProcessTrack kept = track;
  kept.name = batch->keep_text(track.name);
  batch->events.push_back(Batch::Event{kept});
}

void ThreadedSink::thread(const ThreadTrack& track) {
  Batch* batch = &room_for(0, 0);
  ThreadTrack kept = track;
  kept.name = batch->keep_text(track.name);
  batch->events.push_back(Batch::Event{kept});
}

void ThreadedSink::slice(const Slice& slice) { room_for(arg_count(slice.args), 0).keep_named(slice); }

void ThreadedSink::instant(const Instant& instant) { room_for(arg_count(instant.args), 0).keep_named(instant); }

void ThreadedSink::async_slice(const AsyncSlice& slice) {
  Batch& batch = room_for(arg_count(slice.args), 0);
  batch.keep_named(slice).id = batch.keep_text(slice.id);
}

void ThreadedSink::counter(const CounterSample& sample) {
  Batch* batch = &room_for(0, sample.value_count);
  Batch::Event& event = batch->events.emplace_back(Batch::Event{sample});
  CounterSample& kept = std::get<CounterSample>(event.what);
  kept.name = batch->keep(sample.name);
  const CounterSample::Value* end = sample.values + sample.value_count;
  if (sample.value_count > Batch::kValues) {
    kept.values = batch->large_values.emplace_back(sample.values, end).data();
  } else {
    kept.values = batch->values.data() + batch->values.size();
    batch->values.insert(batch->values.end(), sample.values, end);
  }
}

void ThreadedSink::replay(Batch& batch) {
  for (Batch::Event& event : batch.events) {
    const Args* args = nullptr;
    if (event.has_args) {
      replay_args_.view(batch.args.data() + event.first_arg, event.arg_count);
      args = &replay_args_;
    }
    switch (event.what.index()) {
      case 0: inner_.begin(std::get<TimelineInfo>(event.what)); break;
      case 1: inner_.process(std::get<ProcessTrack>(event.what)); break;
      case 2: inner_.thread(std::get<ThreadTrack>(event.what)); break;
      case 3: inner_.slice(with_args(std::get<Slice>(event.what), args)); break;
      case 4: inner_.instant(with_args(std::get<Instant>(event.what), args)); break;
      case 5: inner_.async_slice(with_args(std::get<AsyncSlice>(event.what), args)); break;
      case 6: inner_.counter(std::get<CounterSample>(event.what)); break;
    }
    if (inner_.failed()) break;  // nothing more will be written
  }
  events_.store(inner_.events(), std::memory_order_relaxed);
  bytes_.store(inner_.bytes(), std::memory_order_relaxed);
  if (inner_.failed()) failed_.store(true, std::memory_order_relaxed);
}

void ThreadedSink::run() {
  for (;;) {
    std::unique_ptr<Batch> batch;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return !full_.empty() || closing_; });
      if (full_.empty()) return;
      batch = std::move(full_.front());
      full_.pop_front();
    }
    if (!failed()) {
      try {
        replay(*batch);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mutex_);
        thread_error_ = e.what();
        failed_.store(true, std::memory_order_relaxed);
      }
    }
    batch->clear();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      free_.push_back(std::move(batch));
    }
    changed_.notify_all();
  }
}

bool ThreadedSink::finish(std::string* error) {
  hand_over();
  stop();
  if (!thread_error_.empty()) {
    *error = "writing the output failed: " + thread_error_;
    return false;
  }
  const bool finished = inner_.finish(error);
  events_.store(inner_.events(), std::memory_order_relaxed);
  bytes_.store(inner_.bytes(), std::memory_order_relaxed);
  failed_.store(inner_.failed(), std::memory_order_relaxed);
  return finished;
}

}  // namespace proflaunch::tools::timeline
