#include "tools/proftrace/emit/protobuf_emitter.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "tools/proftrace/emit/proto_output.h"
#include "tools/proftrace/json_writer.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools::emit {

namespace {

// Field numbers (tests/perfetto/perfetto_subset.proto).
namespace trace {
constexpr uint32_t kPacket = 1;
}
namespace packet {
constexpr uint32_t kClockSnapshot = 6;
constexpr uint32_t kTimestamp = 8;
constexpr uint32_t kTimestampClockId = 58;
constexpr uint32_t kTrustedPacketSequenceId = 10;
constexpr uint32_t kTrackEvent = 11;
constexpr uint32_t kInternedData = 12;
constexpr uint32_t kSequenceFlags = 13;
constexpr uint32_t kTracePacketDefaults = 59;
constexpr uint32_t kTrackDescriptor = 60;
constexpr uint32_t kFirstPacketOnSequence = 87;
constexpr uint32_t kPerfSample = 66;
constexpr uint64_t kSeqIncrementalStateCleared = 1;
constexpr uint64_t kSeqNeedsIncrementalState = 2;
}  // namespace packet
namespace defaults {
constexpr uint32_t kTimestampClockId = 58;
}
namespace clock {
constexpr uint32_t kClocks = 1;
constexpr uint32_t kPrimaryTraceClock = 2;
constexpr uint32_t kClockId = 1;
constexpr uint32_t kTimestamp = 2;
constexpr uint32_t kIsIncremental = 3;
constexpr uint32_t kUnitMultiplierNs = 4;
constexpr uint64_t kBoottime = 6;
constexpr uint64_t kMonotonic = 3;
// A clock of this sequence (ids 64-127 are sequence-scoped), incremental:
// each packet's timestamp is the ns since the previous packet's on this
// clock (0 at the timeline's start), 1-3 bytes instead of 4-6. The importer
// reads the delta as int64 and adds it to the clock's last value
// (ClockSynchronizer::ClockDomain::ToNs), so a packet earlier than the one
// before it (another track, written later) carries the negative delta in two's
// complement: 10 bytes, ~3 % of packets.
constexpr uint64_t kTimelineClock = 64;
}  // namespace clock
namespace descriptor {
constexpr uint32_t kUuid = 1;
constexpr uint32_t kName = 2;
constexpr uint32_t kProcess = 3;
constexpr uint32_t kThread = 4;
constexpr uint32_t kParentUuid = 5;
constexpr uint32_t kCounter = 8;
constexpr uint32_t kChildOrdering = 11;
constexpr uint32_t kSiblingOrderRank = 12;
constexpr uint32_t kSiblingMergeBehavior = 15;
constexpr uint64_t kOrderingExplicit = 3;
constexpr uint64_t kMergeNone = 2;
constexpr uint32_t kProcessPid = 1;
constexpr uint32_t kProcessName = 6;
constexpr uint32_t kThreadPid = 1;
constexpr uint32_t kThreadTid = 2;
constexpr uint32_t kThreadName = 5;
constexpr uint32_t kCounterUnit = 3;
constexpr uint64_t kUnitSizeBytes = 3;
constexpr uint32_t kCounterUnitName = 6;
}  // namespace descriptor
namespace event {
constexpr uint32_t kCategoryIids = 3;
constexpr uint32_t kDebugAnnotations = 4;
constexpr uint32_t kType = 9;
constexpr uint32_t kNameIid = 10;
constexpr uint32_t kTrackUuid = 11;
constexpr uint32_t kCategories = 22;
constexpr uint32_t kName = 23;
constexpr uint32_t kCounterValue = 30;
constexpr uint32_t kFlowIds = 47;
constexpr uint32_t kTerminatingFlowIds = 48;
// The same as varints (deprecated, still read: the importer takes these
// when an event has no fixed64 ones). Flow ids below 2^56 take 1-8 bytes
// instead of 8.
constexpr uint32_t kFlowIdsVarint = 36;
constexpr uint32_t kTerminatingFlowIdsVarint = 42;
constexpr uint32_t kCallstackIid = 56;
constexpr uint64_t kSliceBegin = 1;
constexpr uint64_t kSliceEnd = 2;
constexpr uint64_t kInstant = 3;
constexpr uint64_t kCounter = 4;
}  // namespace event
// A callstack sample (PerfSample): the importer puts it in perf_sample,
// which the UI draws per thread and as a flame graph of a selected range.
namespace perf_sample {
constexpr uint32_t kPid = 2;
constexpr uint32_t kTid = 3;
constexpr uint32_t kCallstackIid = 4;
}  // namespace perf_sample
namespace annotation {
constexpr uint32_t kNameIid = 1;
constexpr uint32_t kName = 10;
constexpr uint32_t kBoolValue = 2;
constexpr uint32_t kUintValue = 3;
constexpr uint32_t kIntValue = 4;
constexpr uint32_t kDoubleValue = 5;
constexpr uint32_t kStringValue = 6;
constexpr uint32_t kArrayValues = 12;
constexpr uint32_t kStringValueIid = 17;
}  // namespace annotation
namespace interned {
constexpr uint32_t kEventCategories = 1;
constexpr uint32_t kEventNames = 2;
constexpr uint32_t kDebugAnnotationNames = 3;
constexpr uint32_t kFunctionNames = 5;
constexpr uint32_t kFrames = 6;
constexpr uint32_t kCallstacks = 7;
constexpr uint32_t kDebugAnnotationStringValues = 29;
// Every table's entry: iid = 1; EventName/EventCategory/DebugAnnotationName
// name = 2, InternedString str = 2.
constexpr uint32_t kEntryIid = 1;
constexpr uint32_t kEntryText = 2;
constexpr uint32_t kFrameFunctionNameId = 2;
constexpr uint32_t kCallstackFrameIds = 2;
}  // namespace interned

constexpr uint64_t kSequenceId = 1;
constexpr uint64_t kVarintFlowIdLimit = uint64_t{1} << 56;
constexpr uint32_t kProcessTid = 0xFFFFFFFFu;
// Text without a timeline iid (NVTX messages, window names) is interned by
// content up to this many entries per table and file, then written inline.
constexpr size_t kMaxTextEntries = size_t{1} << 16;
// A debug annotation with a name iid and a number, three numbers or a
// string value iid: tag, length, name (1 + 5), value (at most 3 x 8).
constexpr size_t kMaxShortAnnotationBytes = 2 + 6 + 24;

constexpr char tag_byte(uint32_t field, WireType type) {
  return static_cast<char>(field << 3 | static_cast<uint8_t>(type));  // fields 1-15
}

uint64_t track_key(uint32_t pid, uint32_t tid) { return uint64_t{pid} << 32 | tid; }

// A string field: valid UTF-8, repaired as the JSON repairs it.
void put_text(ProtoBuffer& buffer, uint32_t field, std::string_view text) {
  if (is_valid_utf8(text)) buffer.field_bytes(field, text);
  else buffer.field_bytes(field, utf8_repaired(text));
}

}  // namespace

std::string shard_path(const std::string& path, size_t index) {
  if (index == 1) return path;
  std::string stem = path;
  std::string suffix;
  for (std::string_view ending : {".pftrace.gz", ".pftrace", ".gz"}) {
    if (std::string_view(stem).ends_with(ending)) {
      suffix = std::string(ending);
      stem.resize(stem.size() - ending.size());
      break;
    }
  }
  return stem + "." + std::to_string(index) + suffix;
}

ProtobufEmitter::ProtobufEmitter(std::string path, StackFormatter& stacks, ProtobufOptions options)
    : path_(std::move(path)), stacks_(stacks), options_(options) {}

ProtobufEmitter::~ProtobufEmitter() = default;

bool ProtobufEmitter::open(std::string* error) {
  files_.push_back(shard_path(path_, 1));
  out_ = ProtoOutput::create(files_.back(), std::string_view(path_).ends_with(".gz"), options_.compression,
                             options_.compression_thread, error);
  return out_ != nullptr;
}

uint64_t ProtobufEmitter::bytes() const { return bytes_before_file_ + (out_ ? out_->file_bytes() : 0); }

void ProtobufEmitter::write(std::string_view bytes) {
  if (out_ == nullptr || !out_->write(bytes)) fail(out_ != nullptr ? out_->error() : "");
}

size_t ProtobufEmitter::timestamp_fields(int64_t ns, char* out) {
  char* p = out;
  *p++ = static_cast<char>(packet::kTimestamp << 3);
  if (ns >= 0) {
    // On the incremental timeline clock: the delta from the last packet on it.
    p = put_varint(p, static_cast<uint64_t>(ns - clock_ns_));
    clock_ns_ = ns;
  } else {
    // Before the timeline's start (another host's clock): MONOTONIC itself.
    p = put_varint(p, static_cast<uint64_t>(base_ns_ + ns));
    p = put_varint(p, packet::kTimestampClockId << 3);
    p = put_varint(p, clock::kMonotonic);
  }
  return static_cast<size_t>(p - out);
}

void ProtobufEmitter::start_packet(int64_t ns, bool with_timestamp) {
  packet_.clear();
  if (with_timestamp) {
    char fields[kMaxTimestampBytes];
    packet_.append(std::string_view(fields, timestamp_fields(ns, fields)));
  }
  packet_.field_varint(packet::kTrustedPacketSequenceId, kSequenceId);
}

// The packet as a Trace.packet field, appended to `out`.
void ProtobufEmitter::end_packet_into(std::string& out) {
  char header[11];
  size_t n = 0;
  header[n++] = static_cast<char>(trace::kPacket << 3 | static_cast<uint8_t>(WireType::kLengthDelimited));
  uint64_t length = packet_.size();
  while (length >= 0x80) {
    header[n++] = static_cast<char>(length | 0x80);
    length >>= 7;
  }
  header[n++] = static_cast<char>(length);
  out.append(header, n);
  out.append(packet_.view());
}

void ProtobufEmitter::write_preamble() {
  // The clocks: MONOTONIC is the trace clock; the incremental timeline
  // clock is 0 at the timeline's start (MONOTONIC base_ns); BOOTTIME is declared equal to
  // MONOTONIC (the trace holds no BOOTTIME readings) so nothing is dropped.
  std::string bytes;
  start_packet(0, false);
  const size_t snapshot = packet_.begin_message(packet::kClockSnapshot);
  for (const auto& [id, value] : {std::pair<uint64_t, uint64_t>{clock::kBoottime, base_ns_},
                                  {clock::kMonotonic, base_ns_},
                                  {clock::kTimelineClock, 0}}) {
    const size_t entry = packet_.begin_message(clock::kClocks);
    packet_.field_varint(clock::kClockId, id);
    packet_.field_varint(clock::kTimestamp, value);
    if (id == clock::kTimelineClock) {
      packet_.field_bool(clock::kIsIncremental, true);
      packet_.field_varint(clock::kUnitMultiplierNs, 1);
    }
    packet_.end_message(entry);
  }
  clock_ns_ = 0;  // the snapshot sets the incremental clock
  packet_.field_varint(clock::kPrimaryTraceClock, clock::kMonotonic);
  packet_.end_message(snapshot);
  end_packet_into(bytes);
  // The sequence's state: timestamps on the timeline clock.
  start_packet(0, false);
  packet_.field_varint(packet::kSequenceFlags, packet::kSeqIncrementalStateCleared);
  packet_.field_bool(packet::kFirstPacketOnSequence, true);
  const size_t defaults = packet_.begin_message(packet::kTracePacketDefaults);
  packet_.field_varint(defaults::kTimestampClockId, clock::kTimelineClock);
  packet_.end_message(defaults);
  end_packet_into(bytes);
  write(bytes);
  for (const Descriptor& descriptor : descriptors_) write(descriptor.packet);
}

void ProtobufEmitter::begin(const timeline::TimelineInfo& info) {
  base_ns_ = info.base_ns;
  write_preamble();
}

void ProtobufEmitter::declare(std::string packet) {
  write(packet);
  descriptors_.push_back(Descriptor{std::move(packet)});
}

ProtobufEmitter::Track& ProtobufEmitter::process_track(uint32_t pid) {
  auto [it, inserted] = tracks_.try_emplace(track_key(pid, kProcessTid));
  if (inserted) {
    // Not declared by the timeline (cannot happen for events it places):
    // a bare process.
    it->second.uuid = next_uuid_++;
    it->second.pid = pid;
    start_packet(0, false);
    const size_t d = packet_.begin_message(packet::kTrackDescriptor);
    packet_.field_varint(descriptor::kUuid, it->second.uuid);
    const size_t p = packet_.begin_message(descriptor::kProcess);
    packet_.field_int(descriptor::kProcessPid, static_cast<int32_t>(pid));
    packet_.end_message(p);
    packet_.end_message(d);
    std::string bytes;
    end_packet_into(bytes);
    declare(std::move(bytes));
  }
  return it->second;
}

void ProtobufEmitter::process(const timeline::ProcessTrack& process) {
  auto [it, inserted] = tracks_.try_emplace(track_key(process.pid, kProcessTid));
  if (!inserted) return;  // one descriptor per process
  Track& track = it->second;
  track.uuid = next_uuid_++;
  track.pid = process.pid;
  start_packet(0, false);
  const size_t d = packet_.begin_message(packet::kTrackDescriptor);
  packet_.field_varint(descriptor::kUuid, track.uuid);
  const size_t p = packet_.begin_message(descriptor::kProcess);
  packet_.field_int(descriptor::kProcessPid, static_cast<int32_t>(process.pid));
  put_text(packet_, descriptor::kProcessName, process.name);
  packet_.end_message(p);
  packet_.field_varint(descriptor::kChildOrdering, descriptor::kOrderingExplicit);
  packet_.field_int(descriptor::kSiblingOrderRank, static_cast<int32_t>(process.sort_index));
  packet_.end_message(d);
  std::string bytes;
  end_packet_into(bytes);
  declare(std::move(bytes));
}

void ProtobufEmitter::thread(const timeline::ThreadTrack& thread) {
  const uint64_t parent = process_track(thread.pid).uuid;
  auto [it, inserted] = tracks_.try_emplace(track_key(thread.pid, thread.tid));
  if (!inserted) return;
  Track& track = it->second;
  track.uuid = next_uuid_++;
  track.pid = thread.pid;
  start_packet(0, false);
  const size_t d = packet_.begin_message(packet::kTrackDescriptor);
  packet_.field_varint(descriptor::kUuid, track.uuid);
  packet_.field_varint(descriptor::kParentUuid, parent);
  if (thread.kind == timeline::ThreadKind::kThread) {
    const size_t t = packet_.begin_message(descriptor::kThread);
    packet_.field_int(descriptor::kThreadPid, static_cast<int32_t>(thread.pid));
    packet_.field_int(descriptor::kThreadTid, thread.tid);
    if (!thread.name.empty()) put_text(packet_, descriptor::kThreadName, thread.name);
    packet_.end_message(t);
  } else {
    put_text(packet_, descriptor::kName, thread.name);
    packet_.field_varint(descriptor::kSiblingMergeBehavior, descriptor::kMergeNone);
    track.own_track = true;
    track.parent_uuid = parent;
    track.name = std::string(thread.name);
    track.sort_index = thread.sort_index;
  }
  packet_.field_int(descriptor::kSiblingOrderRank, static_cast<int32_t>(thread.sort_index));
  packet_.end_message(d);
  std::string bytes;
  end_packet_into(bytes);
  declare(std::move(bytes));
}

bool ProtobufEmitter::ends_at_a_written_begin(const Track& track, int64_t begin_ns, int64_t end_ns) const {
  if (!track.own_track || begin_ns >= track.latest_written_begin) return false;
  return std::find(track.written_begins.begin(), track.written_begins.end(), end_ns) != track.written_begins.end();
}

ProtobufEmitter::Track& ProtobufEmitter::twin(Track& track) {
  if (track.twin_key != 0) return tracks_.at(track.twin_key);
  const uint64_t key = track_key(track.pid, next_twin_tid_++);
  track.twin_key = key;
  Track& made = tracks_[key];  // elements of an unordered_map stay put: `track` stays valid
  made.uuid = next_uuid_++;
  made.pid = track.pid;
  made.own_track = true;
  made.parent_uuid = track.parent_uuid;
  made.name = track.name;
  made.sort_index = track.sort_index;
  start_packet(0, false);
  const size_t d = packet_.begin_message(packet::kTrackDescriptor);
  packet_.field_varint(descriptor::kUuid, made.uuid);
  packet_.field_varint(descriptor::kParentUuid, made.parent_uuid);
  put_text(packet_, descriptor::kName, made.name);
  packet_.field_varint(descriptor::kSiblingMergeBehavior, descriptor::kMergeNone);
  packet_.field_int(descriptor::kSiblingOrderRank, static_cast<int32_t>(made.sort_index));
  packet_.end_message(d);
  std::string bytes;
  end_packet_into(bytes);
  declare(std::move(bytes));
  return made;
}

ProtobufEmitter::Track& ProtobufEmitter::track(uint32_t pid, uint32_t tid) {
  const uint64_t key = track_key(pid, tid);
  // Events come on a few tracks at a time (threads, their GPU streams): a
  // direct-mapped cache by key; elements of an unordered_map stay put.
  TrackCacheEntry& cached = track_cache_[(key * 0x9E3779B97F4A7C15ull) >> (64 - kTrackCacheBits)];
  if (cached.track != nullptr && cached.key == key) return *cached.track;
  auto found = tracks_.find(key);
  if (found == tracks_.end()) {
    // A track the timeline did not declare: a thread without a name (a
    // process's main thread, or a thread whose definitions were lost).
    thread(timeline::ThreadTrack{pid, tid, std::string_view(), 0, timeline::ThreadKind::kThread});
    found = tracks_.find(key);
  }
  cached = TrackCacheEntry{key, &found->second};
  return found->second;
}

uint64_t ProtobufEmitter::counter_track(uint32_t pid, timeline::Str name, const char* key, const char* unit_name) {
  auto [it, inserted] = counter_tracks_.try_emplace(std::make_tuple(pid, name.iid, std::string(key)), 0);
  if (!inserted) return it->second;
  it->second = next_uuid_++;
  const uint64_t parent = process_track(pid).uuid;
  start_packet(0, false);
  const size_t d = packet_.begin_message(packet::kTrackDescriptor);
  packet_.field_varint(descriptor::kUuid, it->second);
  packet_.field_varint(descriptor::kParentUuid, parent);
  // The JSON importer names a "C" event's track "<name> <key>": the same here.
  put_text(packet_, descriptor::kName, std::string(name.text) + " " + key);
  const size_t c = packet_.begin_message(descriptor::kCounter);
  if (unit_name == nullptr)
    packet_.field_varint(descriptor::kCounterUnit, descriptor::kUnitSizeBytes);
  else if (*unit_name != '\0')
    put_text(packet_, descriptor::kCounterUnitName, std::string(unit_name));
  packet_.end_message(c);
  packet_.end_message(d);
  std::string bytes;
  end_packet_into(bytes);
  declare(std::move(bytes));
  return it->second;
}

uint32_t ProtobufEmitter::intern_new(InternTable& table, uint32_t field, timeline::Str text) {
  uint32_t* slot = nullptr;
  if (text.iid != 0) {
    if (table.by_timeline_iid.size() <= text.iid) table.by_timeline_iid.resize(text.iid + 1, 0);
    slot = &table.by_timeline_iid[text.iid];
  } else {
    auto found = table.by_text.find(text.text);
    if (found != table.by_text.end()) return found->second;
    if (table.by_text.size() >= kMaxTextEntries) return 0;
    table.texts.emplace_back(text.text);
    slot = &table.by_text.emplace(table.texts.back(), 0).first->second;
  }
  if (*slot != 0) return *slot;
  *slot = table.next++;
  const size_t entry = interned_.begin_message(field);
  interned_.field_varint(interned::kEntryIid, *slot);
  put_text(interned_, interned::kEntryText, text.text);
  interned_.end_message(entry);
  return *slot;
}

uint32_t ProtobufEmitter::intern_annotation_name(const char* key, size_t empty_slot) {
  const uint32_t iid = intern(annotation_names_, interned::kDebugAnnotationNames, timeline::Str{key, 0});
  if (iid != 0 && key_cache_used_ < kKeyCacheSlots / 2) {
    key_cache_[empty_slot] = KeyCacheEntry{key, iid};
    ++key_cache_used_;
  }
  return iid;
}

uint32_t ProtobufEmitter::callstack(const timeline::StackRef& stack) {
  const auto key = std::make_tuple(stack.section, stack.stack.native, stack.stack.python, stack.api);
  auto found = callstacks_.find(key);
  if (found != callstacks_.end()) return found->second;
  const std::vector<std::string> frames =
      stacks_.frames(*stack.section, stack.stack.native, stack.stack.python,
                     stack.api == timeline::kNoLeafApi ? std::string() : stack.section->api_name(stack.api));
  uint32_t iid = 0;
  if (!frames.empty()) {
    frame_ids_.clear();
    for (const std::string& text : frames) {
      auto [frame, inserted] = frames_.try_emplace(text, 0);
      if (inserted) {
        // One frame per distinct text: its function name says it all
        // ("file:line function", "name (file:line)", "module+offset").
        const uint32_t name = intern(function_names_, interned::kFunctionNames, timeline::Str{text, 0});
        frame->second = next_frame_++;
        const size_t entry = interned_.begin_message(interned::kFrames);
        interned_.field_varint(interned::kEntryIid, frame->second);
        if (name != 0) interned_.field_varint(interned::kFrameFunctionNameId, name);
        interned_.end_message(entry);
      }
      frame_ids_.push_back(frame->second);
    }
    iid = next_callstack_++;
    const size_t entry = interned_.begin_message(interned::kCallstacks);
    interned_.field_varint(interned::kEntryIid, iid);
    for (uint32_t frame : frame_ids_) interned_.field_varint(interned::kCallstackFrameIds, frame);
    interned_.end_message(entry);
  }
  callstacks_.emplace(key, iid);
  return iid;
}

// Interned entries gathered for the next event go out first, in a packet
// of their own: the event's packet may wait in its track's reorder buffer.
void ProtobufEmitter::flush_interned() {
  if (interned_.empty()) return;
  ProtoBuffer saved;
  saved.swap(packet_);
  start_packet(0, false);
  packet_.field_varint(packet::kSequenceFlags, packet::kSeqNeedsIncrementalState);
  packet_.field_message(packet::kInternedData, interned_);
  std::string bytes;
  end_packet_into(bytes);
  write(bytes);
  interned_.clear();
  saved.swap(packet_);
}

void ProtobufEmitter::track_event_head(uint64_t type, uint64_t track_uuid, timeline::Str category,
                                       timeline::Str name) {
  // Interned first: their entries go to interned_, not to this packet.
  const uint32_t category_iid =
      category.text.empty() ? 0 : intern(categories_, interned::kEventCategories, category);
  const uint32_t name_iid = name.text.empty() ? 0 : intern(names_, interned::kEventNames, name);
  // Flags, the TrackEvent's tag (its length is filled in by end_message),
  // type, track and the two iids: at most 2 + 2 + 11 + 11 + 6 + 6 bytes.
  char* p = packet_.reserve(40);
  *p++ = tag_byte(packet::kSequenceFlags, WireType::kVarint);
  *p++ = static_cast<char>(packet::kSeqNeedsIncrementalState);
  packet_.commit(p);
  event_mark_ = packet_.begin_message(packet::kTrackEvent);
  p = packet_.reserve(40);
  *p++ = tag_byte(event::kType, WireType::kVarint);
  p = put_varint(p, type);
  *p++ = tag_byte(event::kTrackUuid, WireType::kVarint);
  p = put_varint(p, track_uuid);
  if (category_iid != 0) {
    *p++ = tag_byte(event::kCategoryIids, WireType::kVarint);
    p = put_varint(p, category_iid);
  }
  packet_.commit(p);
  if (!category.text.empty() && category_iid == 0) put_text(packet_, event::kCategories, category.text);
  if (name_iid != 0) {
    p = packet_.reserve(8);
    *p++ = tag_byte(event::kNameIid, WireType::kVarint);
    packet_.commit(put_varint(p, name_iid));
  } else if (!name.text.empty()) {
    put_text(packet_, event::kName, name.text);
  }
}

void ProtobufEmitter::write_args(const timeline::Args* args) {
  if (args == nullptr) return;
  for (const timeline::Arg& arg : *args) {
    if (arg.type == timeline::ArgType::kStack) continue;  // callstack_iid
    const uint32_t name = annotation_name(arg.key);
    uint32_t value_iid = 0;
    if (arg.type == timeline::ArgType::kString && arg.s.iid != 0)
      value_iid = intern(annotation_values_, interned::kDebugAnnotationStringValues, arg.s);
    if (name != 0 && (arg.type != timeline::ArgType::kString || value_iid != 0) &&
        arg.type != timeline::ArgType::kStringList) {
      // Most annotations: an iid and a number, three numbers or a string's
      // iid, at most 30 bytes, so its length takes one byte. Written in
      // place: ~60 % of a GPU slice's packet.
      char* const start = packet_.reserve(kMaxShortAnnotationBytes);
      char* p = start;
      *p++ = tag_byte(event::kDebugAnnotations, WireType::kLengthDelimited);
      char* const length = p++;
      *p++ = tag_byte(annotation::kNameIid, WireType::kVarint);
      p = put_varint(p, name);
      switch (arg.type) {
        case timeline::ArgType::kInt:
          *p++ = tag_byte(annotation::kIntValue, WireType::kVarint);
          p = put_varint(p, static_cast<uint64_t>(arg.i));
          break;
        case timeline::ArgType::kUint:
          *p++ = tag_byte(annotation::kUintValue, WireType::kVarint);
          p = put_varint(p, arg.u);
          break;
        case timeline::ArgType::kBool:
          *p++ = tag_byte(annotation::kBoolValue, WireType::kVarint);
          *p++ = arg.i != 0 ? 1 : 0;
          break;
        case timeline::ArgType::kDouble:
          *p++ = tag_byte(annotation::kDoubleValue, WireType::kFixed64);
          std::memcpy(p, &arg.d, 8);  // little-endian, as the wire wants
          p += 8;
          break;
        case timeline::ArgType::kString:
          p = put_varint(p, uint64_t{annotation::kStringValueIid} << 3 | static_cast<uint8_t>(WireType::kVarint));
          p = put_varint(p, value_iid);
          break;
        case timeline::ArgType::kDim3:  // three numbers, as the JSON's [x,y,z]
          for (const uint32_t value : {arg.dim.x, arg.dim.y, arg.dim.z}) {
            *p++ = tag_byte(annotation::kArrayValues, WireType::kLengthDelimited);
            char* const item = p++;
            *p++ = tag_byte(annotation::kUintValue, WireType::kVarint);
            p = put_varint(p, value);
            *item = static_cast<char>(p - item - 1);
          }
          break;
        case timeline::ArgType::kStringList:
        case timeline::ArgType::kStack: break;
      }
      *length = static_cast<char>(p - length - 1);
      packet_.commit(p);
      continue;
    }
    const size_t mark = packet_.begin_message(event::kDebugAnnotations);
    if (name != 0) packet_.field_varint(annotation::kNameIid, name);
    else put_text(packet_, annotation::kName, arg.key);
    switch (arg.type) {
      case timeline::ArgType::kInt: packet_.field_int(annotation::kIntValue, arg.i); break;
      case timeline::ArgType::kUint: packet_.field_varint(annotation::kUintValue, arg.u); break;
      case timeline::ArgType::kDouble: packet_.field_double(annotation::kDoubleValue, arg.d); break;
      case timeline::ArgType::kBool: packet_.field_bool(annotation::kBoolValue, arg.i != 0); break;
      case timeline::ArgType::kString:
        if (value_iid != 0) packet_.field_varint(annotation::kStringValueIid, value_iid);
        else put_text(packet_, annotation::kStringValue, arg.s.text);
        break;
      case timeline::ArgType::kDim3:
        for (const uint32_t value : {arg.dim.x, arg.dim.y, arg.dim.z}) {
          const size_t item = packet_.begin_message(annotation::kArrayValues);
          packet_.field_varint(annotation::kUintValue, value);
          packet_.end_message(item);
        }
        break;
      case timeline::ArgType::kStringList:
        for (size_t i = 0; i < arg.list_size; ++i) {
          const size_t item = packet_.begin_message(annotation::kArrayValues);
          const uint32_t iid = intern(annotation_values_, interned::kDebugAnnotationStringValues, arg.list[i]);
          if (iid != 0) packet_.field_varint(annotation::kStringValueIid, iid);
          else put_text(packet_, annotation::kStringValue, arg.list[i].text);
          packet_.end_message(item);
        }
        break;
      case timeline::ArgType::kStack: break;
    }
    packet_.end_message(mark);
  }
}

void ProtobufEmitter::slice(const timeline::Slice& slice) {
  ++events_;
  Track* chosen = &this->track(slice.track.pid, slice.track.tid);
  while (ends_at_a_written_begin(*chosen, slice.begin_ns, slice.end_ns)) chosen = &twin(*chosen);
  Track& track = *chosen;
  // The timestamp is added when the begin leaves the reorder buffer: deltas
  // follow the file's order. Encoded straight into the track's arena.
  packet_.swap(track.arena);
  const size_t offset = packet_.size();
  packet_.field_varint(packet::kTrustedPacketSequenceId, kSequenceId);
  track_event_head(event::kSliceBegin, track.uuid, slice.category, slice.name);
  if (slice.flow_out != 0) {
    if (slice.flow_out < kVarintFlowIdLimit) packet_.field_varint(event::kFlowIdsVarint, slice.flow_out);
    else packet_.field_fixed64(event::kFlowIds, slice.flow_out);
  }
  if (slice.flow_in != 0) {
    if (slice.flow_in < kVarintFlowIdLimit) packet_.field_varint(event::kTerminatingFlowIdsVarint, slice.flow_in);
    else packet_.field_fixed64(event::kTerminatingFlowIds, slice.flow_in);
  }
  write_args(slice.args);
  if (!slice.stack.empty() && slice.args != nullptr &&
      std::any_of(slice.args->begin(), slice.args->end(),
                  [](const timeline::Arg& arg) { return arg.type == timeline::ArgType::kStack; })) {
    if (const uint32_t iid = callstack(slice.stack)) packet_.field_varint(event::kCallstackIid, iid);
  }
  packet_.end_message(event_mark_);
  packet_.swap(track.arena);
  flush_interned();
  track.pending.push_back(Pending{slice.begin_ns, std::max(slice.end_ns, slice.begin_ns), static_cast<uint32_t>(offset),
                                  static_cast<uint32_t>(track.arena.size() - offset), next_order_++});
  if (track.pending.size() >= kReorderSlices) flush_track(track, kReorderSlices / 2);
  next_file_if_full();
}

void ProtobufEmitter::write_end(const Track& track, int64_t ns) {
  // No interned data: no sequence flags. Built on the stack: this is half
  // of all packets.
  char body[64];
  char* p = body + timestamp_fields(ns, body);
  *p++ = tag_byte(packet::kTrustedPacketSequenceId, WireType::kVarint);
  p = put_varint(p, kSequenceId);
  *p++ = tag_byte(packet::kTrackEvent, WireType::kLengthDelimited);
  char* length = p++;  // at most 13 bytes follow
  *p++ = tag_byte(event::kType, WireType::kVarint);
  p = put_varint(p, event::kSliceEnd);
  *p++ = tag_byte(event::kTrackUuid, WireType::kVarint);
  p = put_varint(p, track.uuid);
  *length = static_cast<char>(p - length - 1);
  char packet[72];
  packet[0] = tag_byte(trace::kPacket, WireType::kLengthDelimited);
  packet[1] = static_cast<char>(p - body);  // < 0x80
  std::memcpy(packet + 2, body, static_cast<size_t>(p - body));
  write(std::string_view(packet, static_cast<size_t>(p - body) + 2));
}

// Writes the pending begins but the `keep` latest, in time order (outer
// first on equal begins), each after the ends that close at or before it.
void ProtobufEmitter::flush_track(Track& track, size_t keep) {
  std::sort(track.pending.begin(), track.pending.end(), [](const Pending& a, const Pending& b) {
    if (a.begin_ns != b.begin_ns) return a.begin_ns < b.begin_ns;
    if (a.end_ns != b.end_ns) return a.end_ns > b.end_ns;
    return a.order < b.order;
  });
  const size_t count = track.pending.size() > keep ? track.pending.size() - keep : 0;
  for (size_t i = 0; i < count; ++i) {
    const Pending& slice = track.pending[i];
    while (!track.open_ends.empty() && track.open_ends.back() <= slice.begin_ns) {
      write_end(track, track.open_ends.back());
      track.open_ends.pop_back();
    }
    // The packet: its header, the timestamp, then the encoded rest.
    char head[1 + 10 + kMaxTimestampBytes];
    char timestamp[kMaxTimestampBytes];
    const size_t timestamp_size = timestamp_fields(slice.begin_ns, timestamp);
    head[0] = tag_byte(trace::kPacket, WireType::kLengthDelimited);
    char* p = put_varint(head + 1, slice.size + timestamp_size);
    std::memcpy(p, timestamp, timestamp_size);
    p += timestamp_size;
    write(std::string_view(head, static_cast<size_t>(p - head)));
    write(track.arena.view().substr(slice.offset, slice.size));
    if (track.own_track) {
      track.latest_written_begin = std::max(track.latest_written_begin, slice.begin_ns);
      if (track.written_begins.size() < kWrittenBegins) track.written_begins.push_back(slice.begin_ns);
      else track.written_begins[track.next_written++ % kWrittenBegins] = slice.begin_ns;
    }
    // Kept sorted, the earliest end last; on equal ends the later begin
    // (the inner slice) closes first.
    auto position = std::upper_bound(track.open_ends.begin(), track.open_ends.end(), slice.end_ns,
                                     [](int64_t value, int64_t element) { return value > element; });
    track.open_ends.insert(position, slice.end_ns);
  }
  if (count == 0) return;
  track.pending.erase(track.pending.begin(), track.pending.begin() + static_cast<ptrdiff_t>(count));
  if (track.pending.empty()) {
    track.arena.clear();
    return;
  }
  // The written begins stay in the arena until it passes kArenaBytes: the
  // few kept ones are then moved to its front (copied once per ~kArenaBytes
  // written, not at every flush).
  if (track.arena.size() < kArenaBytes) return;
  ProtoBuffer& rest = arena_scratch_;  // keeps its capacity: no allocation per flush
  rest.clear();
  for (Pending& slice : track.pending) {
    const size_t offset = rest.size();
    rest.append(track.arena.view().substr(slice.offset, slice.size));
    slice.offset = static_cast<uint32_t>(offset);
  }
  track.arena.swap(rest);
}

void ProtobufEmitter::close_all_slices() {
  for (auto& [key, track] : tracks_) {
    flush_track(track, 0);
    while (!track.open_ends.empty()) {
      write_end(track, track.open_ends.back());
      track.open_ends.pop_back();
    }
  }
}

void ProtobufEmitter::instant(const timeline::Instant& instant) {
  ++events_;
  if (instant.cpu_sample && !instant.stack.empty()) {
    const uint32_t iid = callstack(instant.stack);
    if (iid != 0) {
      flush_interned();
      start_packet(instant.ns);
      packet_.field_varint(packet::kSequenceFlags, packet::kSeqNeedsIncrementalState);
      const size_t sample = packet_.begin_message(packet::kPerfSample);
      packet_.field_varint(perf_sample::kPid, instant.track.pid);
      packet_.field_varint(perf_sample::kTid, instant.track.tid);
      packet_.field_varint(perf_sample::kCallstackIid, iid);
      packet_.end_message(sample);
      std::string bytes;
      end_packet_into(bytes);
      write(bytes);
      next_file_if_full();
      return;
    }
  }
  const uint64_t uuid = instant.scope == timeline::InstantScope::kProcess
                            ? process_track(instant.track.pid).uuid
                            : track(instant.track.pid, instant.track.tid).uuid;
  start_packet(instant.ns);
  track_event_head(event::kInstant, uuid, instant.category, instant.name);
  write_args(instant.args);
  packet_.end_message(event_mark_);
  flush_interned();
  std::string bytes;
  end_packet_into(bytes);
  write(bytes);
  next_file_if_full();
}

void ProtobufEmitter::async_slice(const timeline::AsyncSlice& slice) {
  ++events_;
  // A track of its own under the process (ranges may overlap); tracks of
  // the same name are shown together.
  const uint64_t parent = process_track(slice.track.pid).uuid;
  const uint64_t uuid = next_uuid_++;
  start_packet(0, false);
  const size_t d = packet_.begin_message(packet::kTrackDescriptor);
  packet_.field_varint(descriptor::kUuid, uuid);
  packet_.field_varint(descriptor::kParentUuid, parent);
  put_text(packet_, descriptor::kName, slice.name.text);
  packet_.end_message(d);
  std::string bytes;
  end_packet_into(bytes);
  write(bytes);  // not repeated in later files: the range is written whole here

  start_packet(slice.begin_ns);
  track_event_head(event::kSliceBegin, uuid, slice.category, slice.name);
  write_args(slice.args);
  const size_t id = packet_.begin_message(event::kDebugAnnotations);
  packet_.field_varint(annotation::kNameIid, annotation_name("id"));
  put_text(packet_, annotation::kStringValue, slice.id);
  packet_.end_message(id);
  const size_t tid = packet_.begin_message(event::kDebugAnnotations);
  packet_.field_varint(annotation::kNameIid, annotation_name("tid"));
  packet_.field_varint(annotation::kUintValue, slice.track.tid);
  packet_.end_message(tid);
  packet_.end_message(event_mark_);
  flush_interned();
  bytes.clear();
  end_packet_into(bytes);
  write(bytes);
  Track range;
  range.uuid = uuid;
  write_end(range, std::max(slice.end_ns, slice.begin_ns));
  next_file_if_full();
}

void ProtobufEmitter::counter(const timeline::CounterSample& sample) {
  std::string bytes;
  for (size_t i = 0; i < sample.value_count; ++i) {
    ++events_;
    const uint64_t uuid = counter_track(sample.pid, sample.name, sample.values[i].key, sample.unit_name);
    start_packet(sample.ns);
    const size_t mark = packet_.begin_message(packet::kTrackEvent);
    packet_.field_varint(event::kType, event::kCounter);
    packet_.field_varint(event::kTrackUuid, uuid);
    packet_.field_int(event::kCounterValue, static_cast<int64_t>(sample.values[i].value));
    packet_.end_message(mark);
    end_packet_into(bytes);
  }
  write(bytes);
  next_file_if_full();
}

bool ProtobufEmitter::help() {
  std::lock_guard<std::mutex> lock(out_mutex_);
  return out_ != nullptr && out_->help();
}

void ProtobufEmitter::next_file_if_full() {
  if (options_.max_bytes == 0 || out_ == nullptr || out_->written() < options_.max_bytes || failed_) return;
  // Close every slice here, then go on in the next file.
  close_all_slices();
  std::lock_guard<std::mutex> lock(out_mutex_);
  if (!out_->close()) {
    fail(out_->error());
    return;
  }
  bytes_before_file_ += out_->file_bytes();
  files_.push_back(shard_path(path_, files_.size() + 1));
  std::string error;
  out_ = ProtoOutput::create(files_.back(), std::string_view(path_).ends_with(".gz"), options_.compression,
                             options_.compression_thread, &error);
  if (out_ == nullptr) {
    fail(error);
    return;
  }
  for (InternTable* table : {&names_, &categories_, &annotation_names_, &annotation_values_, &function_names_})
    table->reset();
  std::fill(std::begin(key_cache_), std::end(key_cache_), KeyCacheEntry{});
  key_cache_used_ = 0;
  callstacks_.clear();
  frames_.clear();
  next_callstack_ = 1;
  next_frame_ = 1;
  write_preamble();  // clears the incremental state and repeats every descriptor
}

void ProtobufEmitter::fail(const std::string& why) {
  if (!failed_) failure_ = why;
  failed_ = true;
}

bool ProtobufEmitter::finish(std::string* error) {
  close_all_slices();
  std::lock_guard<std::mutex> lock(out_mutex_);
  if (out_ != nullptr && !out_->close()) fail(out_->error());
  if (failed_) {
    *error = "writing the output failed" + (failure_.empty() ? std::string() : ": " + failure_);
    return false;
  }
  return true;
}

}  // namespace proflaunch::tools::emit
