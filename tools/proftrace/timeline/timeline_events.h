// The format-neutral timeline `proftrace convert` builds: tracks (processes
// and the tracks inside them), slices, instants, ranges that may cross
// threads, counter values and flows, on one clock (timeline ns: CLOCK_MONOTONIC
// of the reference host minus the timeline's base). The timeline layer
// (track_layout, slice_writer, the memory counters) decides what is on the
// timeline and where; an emitter (tools/proftrace/emit/) only encodes it. A
// new output format is a new TimelineSink.
//
// Every event is handed to the sink synchronously: the strings and arg
// arrays it points to live only for the call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "formats/records.h"
#include "tools/proftrace/timeline/trace_metadata.h"

namespace proflaunch::tools {
class TraceModel;
struct SectionModel;
}  // namespace proflaunch::tools

namespace proflaunch::tools::timeline {

// Text that may recur. `iid` != 0: interned in the timeline's StringTable
// (string_table.h): the same iid always means the same text, and the text
// outlives the conversion, so emitters may cache per iid.
struct Str {
  std::string_view text;
  uint32_t iid = 0;
};

// A track: a process (tid == pid) or one track inside it. pids and tids are
// the timeline's own numbers (the real pid where possible; synthetic ones
// for GPUs and remapped processes), unique in the whole timeline.
struct TrackRef {
  uint32_t pid = 0;
  uint32_t tid = 0;
};

struct ProcessTrack {
  uint32_t pid;
  std::string_view name;
  int64_t sort_index;
};

enum class ThreadKind : uint8_t {
  kThread,  // a thread of the traced process (tid is its real tid)
  kTrack,   // a track of the timeline's own (GPU stream, NVTX domain, capture windows)
};

struct ThreadTrack {
  uint32_t pid;
  uint32_t tid;
  std::string_view name;
  int64_t sort_index;
  ThreadKind kind;
};

enum class ArgType : uint8_t {
  kInt,
  kUint,
  kDouble,      // written with three decimals in JSON
  kBool,
  kString,
  kDim3,        // [x,y,z]: an array of three numbers (Kineto's grid and block)
  kStringList,  // `list`, `list_size` entries
  kStack,       // the event's call stack (Slice::stack): text in JSON, an interned callstack in protobuf
};

// One arg: `type` says which member of the union holds its value (kBool in
// `i`). 40 bytes: every slice carries several, and they are copied when the
// timeline hands events to a sink on another thread (threaded_sink.h).
struct Arg {
  Arg() : i(0) {}

  const char* key = "";
  ArgType type = ArgType::kInt;
  uint32_t list_size = 0;  // kStringList
  union {
    int64_t i;
    uint64_t u;
    double d;
    Str s;
    format::Dim3 dim;
    const Str* list;  // kStringList: `list_size` entries
  };
};

// Args of one event, in the order they are written. Bounded: no event has
// more than kCapacity args.
class Args {
 public:
  static constexpr size_t kCapacity = 32;

  void clear() {
    size_ = 0;
    view_ = nullptr;
  }
  void add_int(const char* key, int64_t value) { push(key, ArgType::kInt).i = value; }
  void add_uint(const char* key, uint64_t value) { push(key, ArgType::kUint).u = value; }
  // Any integer: signed ones as kInt, unsigned ones as kUint.
  template <typename Integer>
  void add_number(const char* key, Integer value) {
    if constexpr (std::is_signed_v<Integer>) add_int(key, value);
    else add_uint(key, value);
  }
  void add_double(const char* key, double value) { push(key, ArgType::kDouble).d = value; }
  void add_bool(const char* key, bool value) { push(key, ArgType::kBool).i = value ? 1 : 0; }
  // `value` must outlive the event (an interned Str, or text the caller holds).
  void add_string(const char* key, Str value) { push(key, ArgType::kString).s = value; }
  // Text the args keep until they are cleared.
  void add_text(const char* key, std::string text) {
    Arg& arg = push(key, ArgType::kString);
    std::string& kept = owned_[static_cast<size_t>(&arg - args_)];
    kept = std::move(text);
    arg.s = Str{kept, 0};
  }
  void add_dim3(const char* key, const format::Dim3& value) { push(key, ArgType::kDim3).dim = value; }
  void add_list(const char* key, const Str* list, size_t size) {
    Arg& arg = push(key, ArgType::kStringList);
    arg.list = list;
    arg.list_size = static_cast<uint32_t>(size);
  }
  void add_stack() { push("stack", ArgType::kStack); }

  // Shows `count` args held elsewhere (until clear() or the next view()),
  // without copying them: they and their strings must outlive that use.
  void view(const Arg* args, size_t count) {
    view_ = args;
    size_ = count;
  }

  const Arg* data() const { return view_ != nullptr ? view_ : args_; }
  size_t size() const { return size_; }
  const Arg* begin() const { return data(); }
  const Arg* end() const { return data() + size_; }

 private:
  Arg& push(const char* key, ArgType type) {
    if (view_ != nullptr) clear();  // a view is not added to
    Arg& arg = args_[size_ < kCapacity ? size_++ : kCapacity - 1];
    arg = Arg{};
    arg.key = key;
    arg.type = type;
    return arg;
  }
  Arg args_[kCapacity];
  std::string owned_[kCapacity];
  const Arg* view_ = nullptr;  // set: the args are there, not in args_
  size_t size_ = 0;
};

// A call's stacks: CallStack ids of its section, 0 when none.
struct CallStackRef {
  uint32_t native = 0;
  uint32_t python = 0;
  bool empty() const { return native == 0 && python == 0; }
};

// `StackRef::api` of a stack that ends in no API call: a CPU sample's,
// whose leaf is the frame the thread was running.
inline constexpr uint16_t kNoLeafApi = 0xFFFF;

// The call stack of an API slice (the kStack arg), or of a CPU sample.
struct StackRef {
  const SectionModel* section = nullptr;
  uint16_t api = 0;  // the API called, shown as the leaf; kNoLeafApi: none
  CallStackRef stack;
  bool empty() const { return section == nullptr || stack.empty(); }
};

// A slice [begin_ns, end_ns] on a track; slices on one track nest (the
// timeline guarantees it). A flow goes from the slice with `flow_out` to the
// slice with the same id in `flow_in`; ids are unique in the timeline.
struct Slice {
  TrackRef track;
  int64_t begin_ns;
  int64_t end_ns;
  Str category;
  Str name;
  uint64_t flow_out = 0;
  uint64_t flow_in = 0;
  const Args* args = nullptr;
  StackRef stack;
};

enum class InstantScope : uint8_t { kThread, kProcess };

struct Instant {
  TrackRef track;
  int64_t ns;
  InstantScope scope;
  Str category;
  Str name;
  const Args* args = nullptr;
  // A CPU sample of the thread (`track`): its stack (the kStack arg in
  // JSON; in protobuf the instant is a callstack sample instead, which the
  // UI draws as a flame graph).
  bool cpu_sample = false;
  StackRef stack;
};

// A range that may overlap others of its process and cross threads (NVTX
// start/end): `id` is unique per process. `track.tid` is the thread that
// started it.
struct AsyncSlice {
  TrackRef track;
  int64_t begin_ns;
  int64_t end_ns;
  Str category;
  Str name;
  std::string_view id;
  const Args* args = nullptr;
};

// Values of the counters "<name> <key>" of a process at one time (bytes).
struct CounterSample {
  uint32_t pid;
  int64_t ns;
  Str name;
  struct Value {
    const char* key;
    uint64_t value;
  };
  const Value* values;
  size_t value_count;
  // The values' unit: null for bytes (memory); else its name ("%", "MHz")
  // for the protobuf's counter descriptor (device metrics).
  const char* unit_name = nullptr;
};

// What the timeline covers, before any event.
struct TimelineInfo {
  // The CLOCK_MONOTONIC time of timeline ns 0 on the reference host.
  int64_t base_ns = 0;
  // The job's rank and GPUs (null: none known).
  const TraceMetadata* metadata = nullptr;
  // The reference host's REALTIME - MONOTONIC, from its clock snapshot
  // (ProcessInfo): timeline ns + base_ns + this is wall-clock (Unix) time.
  // Unset when no section has a snapshot.
  std::optional<int64_t> wall_minus_monotonic_ns;
};

class TimelineSink {
 public:
  virtual ~TimelineSink() = default;

  virtual void begin(const TimelineInfo& info) = 0;
  // Tracks are declared before their first event.
  virtual void process(const ProcessTrack& track) = 0;
  virtual void thread(const ThreadTrack& track) = 0;
  virtual void slice(const Slice& slice) = 0;
  virtual void instant(const Instant& instant) = 0;
  virtual void async_slice(const AsyncSlice& slice) = 0;
  virtual void counter(const CounterSample& sample) = 0;
  // Writes what is buffered. False, with `error`, when writing failed.
  virtual bool finish(std::string* error) = 0;

  // True once writing failed: the converter stops reading.
  virtual bool failed() const = 0;
  // Events written (the format's own unit) and bytes so far.
  virtual uint64_t events() const = 0;
  virtual uint64_t bytes() const = 0;

  // Work the sink can hand to a thread that would otherwise wait for it (a
  // ThreadedSink's caller while every batch is queued): does one piece and
  // returns true, or returns false when there is none. It may be called
  // from that other thread while the calls above run.
  virtual bool help() { return false; }
};

}  // namespace proflaunch::tools::timeline
