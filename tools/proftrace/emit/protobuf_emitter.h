// The timeline as Perfetto's native protobuf trace (.pftrace), encoded by
// hand from the field numbers of Perfetto's documented format (the
// project's subset schema is tests/perfetto/perfetto_subset.proto; the
// importer's rules: docs/outputs.md).
//
// - One packet sequence. It starts with a ClockSnapshot that makes
//   CLOCK_MONOTONIC the trace clock and relates an incremental timeline
//   clock to it, and packet defaults that put every timestamp on that
//   clock: a packet's timestamp is the ns since the previous timed packet's
//   (file order; negative as two's complement).
// - TrackDescriptors: a process per timeline process (GPUs too, with their
//   synthetic pids), a thread descriptor per traced thread, a named child
//   track for every other track (streams, NVTX domains, capture windows),
//   a counter track per memory counter, a track per NVTX start/end range.
//   Sort order as in the JSON (sibling_order_rank).
// - Interned: event names, categories, debug annotation names and string
//   values, and call stacks as function names, frames and callstacks
//   (callstack_iid), in their own packets written before any packet that
//   uses them.
// - Slices are SLICE_BEGIN/SLICE_END pairs. The importer orders events of
//   equal timestamp by file order, so each track's slices pass through a
//   small reorder buffer: begins by time, outer first, and the ends of
//   slices that close at a begin's time before it. A slice that comes after
//   that buffer let a later one go and ends where it begins goes on a twin
//   of its track (a track of the timeline's own: same name and place).
// - Flows: flow_ids on the call's begin, terminating_flow_ids on the GPU
//   work's begin; as varints (the deprecated _old fields the importer still
//   reads) when the id is below 2^56.
// - Memory stays bounded: per track at most kReorderSlices encoded begins
//   waiting, and about kArenaBytes of written ones not yet reclaimed.
//
// Sharding: once a file passes `max_bytes` of packets (before compression:
// what the trace processor holds) the emitter closes every open slice
// there and goes on in the next file (`<stem>.2.pftrace`, ...), which
// starts with the clock, the defaults and every track descriptor again and
// interns afresh: each file opens alone in the UI.
//
// Compression (proto_output.h): by default the packets are deflated inside
// the file, in bundles the trace processor expands in place
// (TracePacket.compressed_packets); a name ending in ".gz" is gzipped as a
// whole instead.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <map>
#include <tuple>
#include <vector>

#include "tools/proftrace/emit/proto_output.h"
#include "tools/proftrace/emit/proto_wire.h"
#include "tools/proftrace/stacks/stack_formatter.h"
#include "tools/proftrace/timeline/timeline_events.h"

namespace proflaunch::tools::emit {

// The name of the index-th file of a sharded output (1: `path` itself):
// "run.pftrace" -> "run.2.pftrace", "run.pftrace.gz" -> "run.2.pftrace.gz".
std::string shard_path(const std::string& path, size_t index);

struct ProtobufOptions {
  uint64_t max_bytes = uint64_t{1} << 30;  // packet bytes per file (before compression); 0: no limit
  PacketCompression compression = PacketCompression::kDeflate;  // inside the file (proto_output.h)
  bool compression_thread = true;  // compress on a thread of its own (proto_output.h)
};

class ProtobufEmitter : public timeline::TimelineSink {
 public:
  // `path`: the first file; a ".gz" ending gzips every file.
  ProtobufEmitter(std::string path, StackFormatter& stacks, ProtobufOptions options = {});
  ~ProtobufEmitter() override;

  // False with `error` when the first file cannot be created.
  bool open(std::string* error);

  void begin(const timeline::TimelineInfo& info) override;
  void process(const timeline::ProcessTrack& track) override;
  void thread(const timeline::ThreadTrack& track) override;
  void slice(const timeline::Slice& slice) override;
  void instant(const timeline::Instant& instant) override;
  void async_slice(const timeline::AsyncSlice& slice) override;
  void counter(const timeline::CounterSample& sample) override;
  bool finish(std::string* error) override;
  // Compresses one block of the output for the thread that calls it (see
  // ProtoOutput::help); safe beside the calls above.
  bool help() override;

  bool failed() const override { return failed_; }
  uint64_t events() const override { return events_; }
  uint64_t bytes() const override;

  // Every file written, first to last.
  const std::vector<std::string>& files() const { return files_; }

  static constexpr size_t kReorderSlices = 16;
  // A track's encoded begins, written ones included, before the unwritten
  // ones are compacted.
  static constexpr size_t kArenaBytes = 8 * 1024;

 private:
  struct Pending {
    int64_t begin_ns;
    int64_t end_ns;
    uint32_t offset;
    uint32_t size;
    uint64_t order;
  };
  struct Track {
    uint64_t uuid = 0;
    uint32_t pid = 0;
    ProtoBuffer arena;  // encoded begin packets of `pending` (and written ones before them)
    std::vector<Pending> pending;
    std::vector<int64_t> open_ends;  // ends not yet written, the earliest last
    // A track of the timeline's own (a GPU stream): its descriptor's parts,
    // for a twin, and the begins already written (the latest kWrittenBegins).
    bool own_track = false;
    uint64_t parent_uuid = 0;
    std::string name;
    int64_t sort_index = 0;
    int64_t latest_written_begin = INT64_MIN;
    std::vector<int64_t> written_begins;  // a ring
    size_t next_written = 0;
    uint64_t twin_key = 0;  // 0: none yet
  };
  // A slice that arrives after a later one on its track was written, and
  // ends where that one begins, would nest it in the importer (equal times
  // in file order: the written begin comes first). It goes on a twin of its
  // track instead: same name, same place, its own slices.
  static constexpr size_t kWrittenBegins = 256;
  bool ends_at_a_written_begin(const Track& track, int64_t begin_ns, int64_t end_ns) const;
  Track& twin(Track& track);
  uint32_t next_twin_tid_ = 0x80000000u;
  // A descriptor as declared, to write again at the top of every file.
  struct Descriptor {
    std::string packet;
  };

  // Interning, per file (a new file starts over). Tables map the timeline's
  // iids (or, for text without one, the text) to this file's iids.
  struct InternTable {
    std::vector<uint32_t> by_timeline_iid;
    std::unordered_map<std::string_view, uint32_t> by_text;  // keys in `texts`
    std::deque<std::string> texts;
    uint32_t next = 1;
    void reset() {
      by_timeline_iid.clear();
      by_text.clear();
      texts.clear();
      next = 1;
    }
  };
  // Returns the iid of `text` in `table`, adding the entry to the pending
  // interned data (field `field` of InternedData) when new; 0 when the text
  // should be written inline (no iid and the table's text map is full).
  uint32_t intern(InternTable& table, uint32_t field, timeline::Str text) {
    // Text with a timeline iid already interned in this file: most calls.
    if (text.iid != 0 && text.iid < table.by_timeline_iid.size() && table.by_timeline_iid[text.iid] != 0)
      return table.by_timeline_iid[text.iid];
    return intern_new(table, field, text);
  }
  uint32_t intern_new(InternTable& table, uint32_t field, timeline::Str text);
  // The iid of an arg key (a literal): from key_cache_ by its address, else
  // interned (0: written inline).
  uint32_t annotation_name(const char* key) {
    for (size_t slot = key_slot(key);; slot = (slot + 1) & (kKeyCacheSlots - 1)) {
      const KeyCacheEntry& entry = key_cache_[slot];
      if (entry.key == key) return entry.iid;
      if (entry.key == nullptr) return intern_annotation_name(key, slot);
    }
  }
  static size_t key_slot(const char* key) {
    // Literals lie a few bytes apart: a multiplicative hash spreads them.
    const uint64_t hash = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key)) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(hash >> (64 - kKeyCacheBits));
  }
  // Interns `key` and remembers it in `empty_slot` (where its probe ended).
  uint32_t intern_annotation_name(const char* key, size_t empty_slot);
  uint32_t callstack(const timeline::StackRef& stack);

  Track& track(uint32_t pid, uint32_t tid);
  Track& process_track(uint32_t pid);
  uint64_t counter_track(uint32_t pid, timeline::Str name, const char* key, const char* unit_name = nullptr);
  void declare(std::string packet);
  // The timestamp field(s) of the packet written next at `ns`, into `out`
  // (kMaxTimestampBytes); moves the incremental clock. Call in file order.
  size_t timestamp_fields(int64_t ns, char* out);
  static constexpr size_t kMaxTimestampBytes = 16;
  void start_packet(int64_t ns, bool with_timestamp = true);
  void end_packet_into(std::string& out);
  void flush_interned();
  void write_args(const timeline::Args* args);
  void track_event_head(uint64_t type, uint64_t track_uuid, timeline::Str category, timeline::Str name);
  void write_end(const Track& track, int64_t ns);
  void flush_track(Track& track, size_t keep);
  // Writes every pending begin and every open end of every track.
  void close_all_slices();
  void write(std::string_view bytes);
  void write_preamble();
  void next_file_if_full();

  std::string path_;
  StackFormatter& stacks_;
  ProtobufOptions options_;
  std::unique_ptr<ProtoOutput> out_;
  // Held by help() while it uses out_, and by this thread while it closes
  // or replaces out_ (only this thread changes out_).
  std::mutex out_mutex_;
  std::vector<std::string> files_;
  bool failed_ = false;
  std::string failure_;  // why the first write failed
  void fail(const std::string& why);
  uint64_t events_ = 0;
  uint64_t bytes_before_file_ = 0;
  int64_t base_ns_ = 0;
  int64_t clock_ns_ = 0;  // the incremental timeline clock: the last timestamp written on it
  ProtoBuffer arena_scratch_;

  ProtoBuffer packet_;    // the packet being built
  ProtoBuffer interned_;  // InternedData entries not yet written
  size_t packet_mark_ = 0;
  size_t event_mark_ = 0;

  uint64_t next_uuid_ = 1;
  uint64_t next_order_ = 0;
  std::unordered_map<uint64_t, Track> tracks_;  // (pid << 32 | tid); process tracks at tid 0xFFFFFFFF
  struct TrackCacheEntry {
    uint64_t key = 0;
    Track* track = nullptr;
  };
  static constexpr unsigned kTrackCacheBits = 6;
  TrackCacheEntry track_cache_[1u << kTrackCacheBits];
  std::map<std::tuple<uint32_t, uint32_t, std::string>, uint64_t> counter_tracks_;  // (pid, name iid, key)
  std::vector<Descriptor> descriptors_;
  InternTable names_, categories_, annotation_names_, annotation_values_, function_names_;
  // Arg keys are literals: their iid by address.
  struct KeyCacheEntry {
    const char* key = nullptr;
    uint32_t iid = 0;
  };
  // Open addressing (linear probing), never more than half full: a key
  // never evicts another (two keys taking turns in one slot of a
  // direct-mapped cache cost a string hash per annotation).
  static constexpr unsigned kKeyCacheBits = 10;
  static constexpr size_t kKeyCacheSlots = size_t{1} << kKeyCacheBits;
  KeyCacheEntry key_cache_[kKeyCacheSlots];
  size_t key_cache_used_ = 0;
  std::map<std::tuple<const SectionModel*, uint32_t, uint32_t, uint16_t>, uint32_t> callstacks_;
  std::unordered_map<std::string, uint32_t> frames_;  // frame text -> frame iid
  uint32_t next_callstack_ = 1;
  uint32_t next_frame_ = 1;
  std::vector<uint32_t> frame_ids_;  // scratch
};

}  // namespace proflaunch::tools::emit
