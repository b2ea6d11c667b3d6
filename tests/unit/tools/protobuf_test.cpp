// The protobuf emitter: the wire encoder, the order of slice begins and
// ends on a track (the importer pairs them by timestamp, then file order),
// shards that each stand alone, gzip, and `convert -o X.pftrace` end to end
// (checked against the JSON by tests/perfetto/pftrace_check.py).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/tools/tool_fixture.h"
#include "tests/unit/tools/trace_scenarios.h"
#include "tools/proftrace/emit/proto_output.h"
#include "tools/proftrace/emit/proto_wire.h"
#include "tools/proftrace/emit/protobuf_emitter.h"
#include "tools/proftrace/stacks/stack_formatter.h"

namespace proflaunch::testing {
namespace {

using tools::emit::ProtoBuffer;
using tools::emit::ProtobufEmitter;
namespace tl = tools::timeline;

// ---- a small decoder for what the tests look at ----

uint64_t read_varint(const std::string& data, size_t& pos) {
  uint64_t value = 0;
  for (int shift = 0; pos < data.size(); shift += 7) {
    const auto byte = static_cast<uint8_t>(data[pos++]);
    value |= uint64_t{byte & 0x7Fu} << shift;
    if (byte < 0x80) break;
  }
  return value;
}

struct Field {
  uint32_t number;
  uint64_t value = 0;   // varint, fixed64
  std::string bytes;    // length-delimited
};

std::vector<Field> decode(const std::string& data) {
  std::vector<Field> fields;
  size_t pos = 0;
  while (pos < data.size()) {
    const uint64_t key = read_varint(data, pos);
    Field field{static_cast<uint32_t>(key >> 3)};
    switch (key & 7) {
      case 0: field.value = read_varint(data, pos); break;
      case 1:
        for (int i = 0; i < 8; ++i) field.value |= uint64_t{static_cast<uint8_t>(data[pos + i])} << (8 * i);
        pos += 8;
        break;
      case 2: {
        const uint64_t length = read_varint(data, pos);
        field.bytes = data.substr(pos, length);
        pos += length;
        break;
      }
      default: ADD_FAILURE() << "wire type " << (key & 7); return fields;
    }
    fields.push_back(std::move(field));
  }
  return fields;
}

const Field* find(const std::vector<Field>& fields, uint32_t number) {
  for (const Field& f : fields)
    if (f.number == number) return &f;
  return nullptr;
}

std::string packet_field(const std::string& packet) {
  std::string out(1, '\x0a');
  uint64_t length = packet.size();
  while (length >= 0x80) {
    out += static_cast<char>(length | 0x80);
    length >>= 7;
  }
  out += static_cast<char>(length);
  return out + packet;
}

std::string inflate_zlib(const std::string& in) {
  z_stream stream{};
  if (inflateInit(&stream) != Z_OK) return {};
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  stream.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char buffer[65536];
  int status = Z_OK;
  while (status == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof buffer;
    status = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - stream.avail_out);
  }
  inflateEnd(&stream);
  if (status != Z_STREAM_END) ADD_FAILURE() << "a compressed_packets bundle does not inflate";
  // The trace processor decompresses a bundle as exactly one stream.
  if (stream.avail_in != 0) ADD_FAILURE() << "a compressed_packets bundle has bytes after its stream";
  return out;
}

std::string unzstd(const std::string& in) {
  const unsigned long long size = ZSTD_getFrameContentSize(in.data(), in.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) {
    ADD_FAILURE() << "a zstd bundle without a content size";
    return {};
  }
  if (ZSTD_findFrameCompressedSize(in.data(), in.size()) != in.size())
    ADD_FAILURE() << "a zstd bundle is not exactly one frame";  // the trace processor's rule
  std::string out(size, '\0');
  const size_t got = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
  if (ZSTD_isError(got) || got != size) ADD_FAILURE() << "a zstd_compressed_packets bundle does not decompress";
  return out;
}

// The trace with every compressed bundle (compressed_packets: 50,
// zstd_compressed_packets: 133) replaced by the packets it holds, where the
// importer parses them. `bundles`: how many there were.
std::string expand_bundles(const std::string& data, size_t* bundles = nullptr) {
  std::string out;
  for (const Field& top : decode(data)) {
    const std::vector<Field> packet = decode(top.bytes);
    const Field* deflated = find(packet, 50);
    const Field* zstd = find(packet, 133);
    if (deflated == nullptr && zstd == nullptr) {
      out += packet_field(top.bytes);
      continue;
    }
    if (bundles != nullptr) ++*bundles;
    EXPECT_EQ(packet.size(), 1u) << "a bundle holds nothing but its compressed packets";
    EXPECT_LT(packet_field(top.bytes).size(), 512u * 1024) << "Perfetto's limit for a bundle";
    const std::string inner = deflated != nullptr ? inflate_zlib(deflated->bytes) : unzstd(zstd->bytes);
    // The importer parses a bundle's content alone: whole packets only.
    size_t pos = 0;
    while (pos < inner.size()) {
      if (inner[pos++] != '\x0a') {
        ADD_FAILURE() << "a bundle holds something other than packets";
        break;
      }
      pos += read_varint(inner, pos);
    }
    EXPECT_EQ(pos, inner.size()) << "a bundle ends inside a packet";
    out += inner;
  }
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string gunzip_file(const std::string& path) {
  gzFile in = gzopen(path.c_str(), "rb");
  std::string out;
  char buffer[65536];
  int n;
  while (in != nullptr && (n = gzread(in, buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<size_t>(n));
  if (in != nullptr) gzclose(in);
  return out;
}

// What the importer makes of one file: its packets in order, the slices
// (begins paired with ends per track after sorting by timestamp, then file
// order), and whether every track was described before its first event.
// Timestamps as the importer reads them: on the sequence's incremental clock
// a delta (signed) from the previous packet's on it, set by the
// ClockSnapshot; with timestamp_clock_id MONOTONIC, absolute. All relative
// to the snapshot's MONOTONIC reading.
struct Imported {
  size_t packets = 0;
  bool starts_with_clock = false;
  std::set<uint64_t> described;
  std::vector<std::string> problems;
  std::multiset<std::tuple<uint64_t, int64_t, int64_t>> slices;  // (track, begin, end)
  std::map<uint64_t, int> flows_out, flows_in;
};

Imported import(const std::string& data) {
  Imported result;
  struct Event {
    int64_t ts;
    size_t order;
    uint64_t track;
    uint64_t type;
  };
  std::vector<Event> events;
  int64_t monotonic_base = 0, incremental_clock = 0;
  bool has_incremental_clock = false;
  for (const Field& packet_field : decode(expand_bundles(data))) {
    const std::vector<Field> packet = decode(packet_field.bytes);
    if (result.packets++ == 0) result.starts_with_clock = find(packet, 6) != nullptr;
    if (const Field* snapshot = find(packet, 6)) {
      for (const Field& clock : decode(snapshot->bytes)) {
        if (clock.number != 1) continue;  // ClockSnapshot.clocks
        const std::vector<Field> entry = decode(clock.bytes);
        const uint64_t id = find(entry, 1)->value, value = find(entry, 2)->value;
        if (id == 3) monotonic_base = static_cast<int64_t>(value);
        if (id == 64 && find(entry, 3) != nullptr && find(entry, 3)->value == 1) {
          has_incremental_clock = true;
          incremental_clock = static_cast<int64_t>(value);
        }
      }
    }
    if (const Field* descriptor = find(packet, 60)) result.described.insert(find(decode(descriptor->bytes), 1)->value);
    const Field* event = find(packet, 11);
    if (event == nullptr) continue;
    const std::vector<Field> fields = decode(event->bytes);
    const uint64_t track = find(fields, 11)->value;
    if (result.described.count(track) == 0) result.problems.push_back("an event before its track's descriptor");
    for (const Field& f : fields) {
      if (f.number == 47 || f.number == 36) ++result.flows_out[f.value];
      if (f.number == 48 || f.number == 42) ++result.flows_in[f.value];
    }
    const int64_t raw = static_cast<int64_t>(find(packet, 8)->value);
    int64_t ts;
    if (find(packet, 58) != nullptr) {
      ts = raw - monotonic_base;
    } else {
      if (!has_incremental_clock) result.problems.push_back("a timestamp before the incremental clock's snapshot");
      ts = incremental_clock += raw;
    }
    events.push_back(Event{ts, events.size(), track, find(fields, 9)->value});
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.ts < b.ts; });
  std::map<uint64_t, std::vector<int64_t>> open;
  for (const Event& e : events) {
    if (e.type == 1) open[e.track].push_back(e.ts);
    if (e.type != 2) continue;
    if (open[e.track].empty()) {
      result.problems.push_back("an end with no open slice");
      continue;
    }
    result.slices.emplace(e.track, open[e.track].back(), e.ts);
    open[e.track].pop_back();
  }
  for (auto& [track, stack] : open)
    if (!stack.empty()) result.problems.push_back("a slice that never ends");
  return result;
}

// ---- the wire ----

TEST(ProtoWire, VarintsAreMinimalAndLittleEndianGroupsOfSeven) {
  ProtoBuffer buffer;
  buffer.varint(0);
  buffer.varint(127);
  buffer.varint(128);
  buffer.varint(300);
  buffer.varint(~uint64_t{0});
  const std::string bytes(buffer.view());
  EXPECT_EQ(bytes.substr(0, 6), std::string("\x00\x7f\x80\x01\xac\x02", 6));
  EXPECT_EQ(bytes.size(), 1u + 1 + 2 + 2 + 10);
  size_t pos = 0;
  for (uint64_t expected : {uint64_t{0}, uint64_t{127}, uint64_t{128}, uint64_t{300}, ~uint64_t{0}})
    EXPECT_EQ(read_varint(bytes, pos), expected);
}

TEST(ProtoWire, NestedMessagesGetMinimalLengthsHoweverLong) {
  for (size_t body : {size_t{0}, size_t{127}, size_t{128}, size_t{16383}, size_t{16384}, size_t{200000}}) {
    ProtoBuffer buffer;
    buffer.field_varint(1, 7);
    const size_t mark = buffer.begin_message(2);
    buffer.field_bytes(3, std::string(body, 'x'));
    buffer.end_message(mark);
    buffer.field_fixed64(4, 0x0102030405060708ull);
    const std::vector<Field> fields = decode(std::string(buffer.view()));
    ASSERT_EQ(fields.size(), 3u) << body;
    EXPECT_EQ(fields[0].value, 7u);
    const std::vector<Field> inner = decode(fields[1].bytes);
    ASSERT_EQ(inner.size(), 1u);
    EXPECT_EQ(inner[0].bytes, std::string(body, 'x'));
    EXPECT_EQ(fields[2].value, 0x0102030405060708ull);
    // Minimal: field 1, then the tag, the length's varint and the inner
    // message, then field 4.
    const size_t inner_size = 1 + tools::emit::varint_size(body) + body;
    EXPECT_EQ(buffer.size(), 2 + 1 + tools::emit::varint_size(inner_size) + inner_size + 9);
  }
}

// ---- slice order on a track ----

class EmitterTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name) { return temp_path(name); }

  // Declares one process with one thread and returns the emitter.
  std::unique_ptr<ProtobufEmitter> open(const std::string& file, uint64_t max_bytes = 0) {
    tools::emit::ProtobufOptions options;
    options.max_bytes = max_bytes;
    auto emitter = std::make_unique<ProtobufEmitter>(file, stacks_, options);
    std::string error;
    EXPECT_TRUE(emitter->open(&error)) << error;
    emitter->begin(tl::TimelineInfo{1'000'000});
    emitter->process(tl::ProcessTrack{10, "python train.py", 0});
    emitter->thread(tl::ThreadTrack{10, 11, "worker", 0, tl::ThreadKind::kThread});
    return emitter;
  }
  void slice(ProtobufEmitter& emitter, int64_t begin, int64_t end, uint64_t flow_out = 0, uint64_t flow_in = 0) {
    tl::Slice s{};
    s.track = tl::TrackRef{10, 11};
    s.begin_ns = begin;
    s.end_ns = end;
    s.category = tl::Str{"runtime", 0};
    s.name = tl::Str{"cudaLaunchKernel", 0};
    s.flow_out = flow_out;
    s.flow_in = flow_in;
    args_.clear();
    args_.add_uint("correlation_id", static_cast<uint64_t>(begin));
    s.args = &args_;
    emitter.slice(s);
  }

  tools::StackFormatter stacks_;
  tl::Args args_;
};

TEST_F(EmitterTest, SlicesWrittenOutOfOrderPairTheirBeginsAndEndsRightOnEqualTimestamps) {
  // Every order the timeline produces: a later sibling before an earlier
  // one that it touches, an inner call before its outer call with the same
  // begin, the same end, zero-length slices at a boundary, nested three deep.
  const std::vector<std::pair<int64_t, int64_t>> written = {
      {100, 200}, {50, 100},                // touching, written in reverse
      {300, 310}, {300, 400},               // same begin: inner first
      {380, 400}, {400, 400}, {400, 450},   // same end, then a zero-length one at it, then a sibling
      {500, 520}, {505, 520}, {500, 600},   // three deep, sharing ends and begins
      {600, 600}, {600, 600},               // two zero-length ones at a slice's end
  };
  const std::string file = path("order.pftrace");
  auto emitter = open(file);
  for (const auto& [begin, end] : written) slice(*emitter, begin, end);
  std::string error;
  ASSERT_TRUE(emitter->finish(&error)) << error;

  const Imported imported = import(read_file(file));
  EXPECT_TRUE(imported.problems.empty()) << imported.problems.front();
  std::multiset<std::pair<int64_t, int64_t>> got, want(written.begin(), written.end());
  for (const auto& [track, begin, end] : imported.slices) got.emplace(begin, end);
  EXPECT_EQ(got, want);
}

TEST_F(EmitterTest, ManyInterleavedSlicesPassThroughTheReorderBufferIntact) {
  // Calls that return in reverse nesting order, across many buffer flushes.
  const std::string file = path("many.pftrace");
  auto emitter = open(file);
  std::multiset<std::pair<int64_t, int64_t>> want;
  for (int64_t i = 0; i < 1000; ++i) {
    const int64_t t = i * 100;
    slice(*emitter, t + 10, t + 20);  // inner, first
    slice(*emitter, t, t + 20);       // outer, same end
    slice(*emitter, t + 20, t + 100);  // next sibling, touching
    want.insert({{t + 10, t + 20}, {t, t + 20}, {t + 20, t + 100}});
  }
  std::string error;
  ASSERT_TRUE(emitter->finish(&error)) << error;
  const Imported imported = import(read_file(file));
  EXPECT_TRUE(imported.problems.empty()) << imported.problems.front();
  std::multiset<std::pair<int64_t, int64_t>> got;
  for (const auto& [track, begin, end] : imported.slices) got.emplace(begin, end);
  EXPECT_EQ(got, want);
  EXPECT_EQ(emitter->events(), 3000u);
}

TEST_F(EmitterTest, ALateSliceThatEndsWhereAWrittenOneBeginsGoesOnATwinTrack) {
  // GPU work handed over at the end of the input (its call came before a
  // flight recorder's window) after the work that follows it on its stream
  // has left the reorder buffer, ending exactly where that work begins: on
  // the same track, the importer would read the written begin first at that
  // time and nest the later slice inside the late one (seen in e2e_ring).
  const std::string file = path("late.pftrace");
  auto emitter = open(file);
  emitter->thread(tl::ThreadTrack{10, 7, "Stream 7 (pid 10)", 5, tl::ThreadKind::kTrack});
  std::multiset<std::pair<int64_t, int64_t>> want;
  auto gpu = [&](int64_t begin, int64_t end) {
    tl::Slice s{};
    s.track = tl::TrackRef{10, 7};
    s.begin_ns = begin;
    s.end_ns = end;
    s.category = tl::Str{"kernel", 0};
    s.name = tl::Str{"k", 0};
    emitter->slice(s);
    want.insert({begin, end});
  };
  for (int64_t i = 0; i < 40; ++i) gpu(6'000 + i * 2'000, 8'000 + i * 2'000);  // back to back
  gpu(0, 6'000);   // late, touching the first written one
  gpu(0, 0);       // and a zero-length one before it
  std::string error;
  ASSERT_TRUE(emitter->finish(&error)) << error;
  const Imported imported = import(read_file(file));
  EXPECT_TRUE(imported.problems.empty()) << imported.problems.front();
  std::multiset<std::pair<int64_t, int64_t>> got;
  std::set<uint64_t> tracks;
  for (const auto& [track, begin, end] : imported.slices) {
    got.emplace(begin, end);
    tracks.insert(track);
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(tracks.size(), 2u) << "the stream's track and its twin";
}

TEST_F(EmitterTest, TimestampsAreDeltasInFileOrderAndStepBackAsNegativeDeltas) {
  // Two tracks: the second's slices are earlier than the first's, so the
  // file steps back in time between them.
  const std::string file = path("deltas.pftrace");
  auto emitter = open(file);
  emitter->thread(tl::ThreadTrack{10, 12, "other", 1, tl::ThreadKind::kThread});
  std::multiset<std::tuple<uint32_t, int64_t, int64_t>> want;
  for (int64_t i = 0; i < 100; ++i) {
    slice(*emitter, 1'000'000 + i * 1000, 1'000'000 + i * 1000 + 500);
    want.emplace(11, 1'000'000 + i * 1000, 1'000'000 + i * 1000 + 500);
    tl::Slice s{};
    s.track = tl::TrackRef{10, 12};
    s.begin_ns = i * 1000 + 3;
    s.end_ns = i * 1000 + 7;
    s.name = tl::Str{"early", 0};
    emitter->slice(s);
    want.emplace(12, i * 1000 + 3, i * 1000 + 7);
  }
  // Before the timeline's start (another host's clock): absolute MONOTONIC.
  tl::Slice before{};
  before.track = tl::TrackRef{10, 12};
  before.begin_ns = -2000;
  before.end_ns = -1000;
  before.name = tl::Str{"before", 0};
  emitter->slice(before);
  want.emplace(12, -2000, -1000);
  std::string error;
  ASSERT_TRUE(emitter->finish(&error)) << error;

  const std::string data = read_file(file);
  const Imported imported = import(data);
  EXPECT_TRUE(imported.problems.empty()) << imported.problems.front();
  std::multiset<std::tuple<uint32_t, int64_t, int64_t>> got;
  for (const auto& [track, begin, end] : imported.slices) got.emplace(track == 2 ? 11 : 12, begin, end);
  EXPECT_EQ(got, want);
  // Small steps take small varints: most timestamps here are 1-3 bytes.
  size_t timestamps = 0, short_ones = 0, negative = 0;
  for (const Field& packet_field : decode(expand_bundles(data))) {
    for (const Field& f : decode(packet_field.bytes)) {
      if (f.number != 8) continue;
      ++timestamps;
      if (f.value < (uint64_t{1} << 21)) ++short_ones;
      if (static_cast<int64_t>(f.value) < 0) ++negative;
    }
  }
  EXPECT_GT(negative, 0u);
  EXPECT_GT(short_ones, timestamps * 3 / 4);
}

TEST_F(EmitterTest, FlowIdsAreVarintsBelowTwoToThe56AndFixed64Above) {
  const std::string file = path("flows.pftrace");
  auto emitter = open(file);
  const uint64_t big = (uint64_t{1} << 56) + 5;
  slice(*emitter, 100, 200, 7, 0);
  slice(*emitter, 300, 400, big, 0);
  slice(*emitter, 500, 600, 0, 7);
  slice(*emitter, 700, 800, 0, big);
  std::string error;
  ASSERT_TRUE(emitter->finish(&error)) << error;
  std::map<uint32_t, std::vector<uint64_t>> flows;  // field -> ids
  for (const Field& packet_field : decode(expand_bundles(read_file(file)))) {
    const std::vector<Field> packet = decode(packet_field.bytes);
    if (const Field* event = find(packet, 11))
      for (const Field& f : decode(event->bytes))
        if (f.number == 36 || f.number == 42 || f.number == 47 || f.number == 48) flows[f.number].push_back(f.value);
  }
  EXPECT_EQ(flows[36], std::vector<uint64_t>{7});
  EXPECT_EQ(flows[42], std::vector<uint64_t>{7});
  EXPECT_EQ(flows[47], std::vector<uint64_t>{big});
  EXPECT_EQ(flows[48], std::vector<uint64_t>{big});
}

TEST_F(EmitterTest, ShardsEachStartWithTheClockAndDescribeEveryTrackTheyUse) {
  const std::string file = path("big.pftrace");
  auto emitter = open(file, 4096);
  std::multiset<std::pair<int64_t, int64_t>> want;
  for (int64_t i = 0; i < 2000; ++i) {
    slice(*emitter, i * 10, i * 10 + 5, static_cast<uint64_t>(i + 1), 0);
    want.emplace(i * 10, i * 10 + 5);
  }
  std::string error;
  ASSERT_TRUE(emitter->finish(&error)) << error;
  const std::vector<std::string>& files = emitter->files();
  ASSERT_GT(files.size(), 3u);
  EXPECT_EQ(files[0], file);
  EXPECT_EQ(files[1], path("big.2.pftrace"));
  std::multiset<std::pair<int64_t, int64_t>> got;
  uint64_t total = 0;
  for (const std::string& shard : files) {
    const std::string data = read_file(shard);
    total += data.size();
    EXPECT_LT(data.size(), 4096u + 4096u) << shard;  // one flush past the bound at most
    const Imported imported = import(data);
    EXPECT_TRUE(imported.starts_with_clock) << shard;
    EXPECT_TRUE(imported.problems.empty()) << shard << ": " << imported.problems.front();
    for (const auto& [track, begin, end] : imported.slices) got.emplace(begin, end);
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(total, emitter->bytes());
}

TEST_F(EmitterTest, AGzNameWritesGzip) {
  const std::string file = path("small.pftrace.gz");
  auto emitter = open(file);
  for (int64_t i = 0; i < 100; ++i) slice(*emitter, i * 10, i * 10 + 5);
  std::string error;
  ASSERT_TRUE(emitter->finish(&error)) << error;
  const std::string raw = read_file(file);
  ASSERT_GE(raw.size(), 2u);
  EXPECT_EQ(static_cast<uint8_t>(raw[0]), 0x1f);
  EXPECT_EQ(static_cast<uint8_t>(raw[1]), 0x8b);
  const Imported imported = import(gunzip_file(file));
  EXPECT_TRUE(imported.problems.empty());
  EXPECT_EQ(imported.slices.size(), 100u);
}

TEST_F(EmitterTest, AnUnwritableFileIsAnError) {
  ProtobufEmitter emitter(path("no/such/dir/x.pftrace"), stacks_);
  std::string error;
  EXPECT_FALSE(emitter.open(&error));
  EXPECT_NE(error.find("cannot create the output"), std::string::npos) << error;
}

// ---- convert -o X.pftrace ----

constexpr uint64_t kStart = 5'000'000'000;
constexpr uint64_t kKernel = 0x1234;

std::string launches_trace(int launches) {
  format::TraceBuilder trace;
  const TracedProcess p = add_process(trace, 0x51, 4321, kStart);
  trace.function(p.section, kKernel, "_Z5scaleIfEvPT_i");
  trace.thread(p.section, 4322, "worker");
  for (int i = 0; i < launches; ++i) {
    const uint64_t t = kStart + 1000 + static_cast<uint64_t>(i) * 10000;
    trace.event(p.section, 4322, launch(p, static_cast<uint64_t>(i + 1), t, t + 2000, kKernel, 0xABC));
    trace.event(p.section, 9999,
                activity(static_cast<uint64_t>(i + 1), t + 3000, t + 8000, 0xABC, format::GpuActivityKind::kKernel));
  }
  return write_trace(trace, "launches.trace");
}

TEST(ConvertProtobuf, TheExtensionPicksTheFormatAndTheEventsMatchTheJson) {
  const std::string input = launches_trace(50);
  tools::ConvertCommand json;
  json.output = temp_path("x.json");
  const ConvertedTrace as_json = convert_files({input}, json);
  ASSERT_EQ(as_json.exit_code, 0) << as_json.err;

  tools::ConvertCommand protobuf;
  protobuf.inputs = {input};
  protobuf.output = temp_path("x.pftrace");
  protobuf.quiet = true;
  std::FILE* err = std::tmpfile();
  ASSERT_EQ(tools::run_convert(protobuf, err), 0);
  std::fclose(err);
  const std::string data = read_file(protobuf.output);
  ASSERT_FALSE(data.empty());
  EXPECT_NE(data.substr(0, 1), "{");  // not JSON
  const Imported imported = import(data);
  // 50 calls and their 50 kernels, and the steps the launches' period makes
  // (Kineto's ProfilerStep#N), as many as the JSON has.
  size_t steps = 0;
  for (const JsonValue* slice : as_json.with_phase('X', "user_annotation"))
    if ((*slice)["name"].str().rfind("ProfilerStep#", 0) == 0) ++steps;
  EXPECT_EQ(imported.slices.size(), 100u + steps);
  EXPECT_EQ(imported.flows_out.size(), 50u);
  EXPECT_EQ(imported.flows_in.size(), 50u);

  const std::string plain = temp_path("x.plain.pftrace");
  const CommandOutput check = run_shell(std::string(PROFLAUNCH_PYTHON3) + " " + PFTRACE_CHECKER + " " +
                                        protobuf.output + " --json " + json.output + " --expand " + plain);
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  // protoc reads the file (bundles as bytes) and, expanded, every packet in them.
  std::map<std::string, std::string> text;
  for (const std::string& file : {protobuf.output, plain}) {
    const CommandOutput decoded = run_shell("protoc --decode=perfetto_subset.Trace -I " + std::string(PERFETTO_PROTO_DIR) +
                                            " perfetto_subset.proto < " + file);
    EXPECT_EQ(decoded.exit_code, 0) << decoded.err;
    text[file] = decoded.out;
  }
  EXPECT_NE(text[protobuf.output].find("compressed_packets:"), std::string::npos);
  EXPECT_NE(text[plain].find("track_event {"), std::string::npos);
  EXPECT_EQ(text[plain].find("compressed_packets"), std::string::npos);
}

// A disk that fills during the conversion: "x.pftrace" is a link to
// /dev/full, where every write fails with ENOSPC once the buffer flushes.
TEST(ConvertProtobuf, AFullDiskIsAnErrorAndNoFileIsLeft) {
  const std::string input = launches_trace(20000);  // well past the 1 MB output buffer
  const std::string output = temp_path("full.pftrace");
  std::remove(output.c_str());
  ASSERT_EQ(symlink("/dev/full", output.c_str()), 0);
  tools::ConvertCommand command;
  command.inputs = {input};
  command.output = output;
  std::FILE* err = std::tmpfile();
  EXPECT_EQ(tools::run_convert(command, err), tools::kExitError);
  std::rewind(err);
  std::string message(4096, '\0');
  message.resize(std::fread(message.data(), 1, message.size(), err));
  std::fclose(err);
  EXPECT_NE(message.find("full.pftrace"), std::string::npos) << message;
  EXPECT_NE(message.find("No space left on device"), std::string::npos) << message;
  EXPECT_EQ(message.find("wrote"), std::string::npos) << message;  // no success summary
  struct stat info {};
  EXPECT_NE(lstat(output.c_str(), &info), 0) << "the output is removed";
}

TEST(ConvertProtobuf, WithoutAnOutputNameASmallTraceBecomesJsonNextToIt) {
  const std::string input = launches_trace(3);
  tools::ConvertCommand command;
  command.inputs = {input};
  std::FILE* err = std::tmpfile();
  ASSERT_EQ(tools::run_convert(command, err), 0);
  std::fclose(err);
  const std::string json = input.substr(0, input.size() - std::string(".trace").size()) + ".json";
  EXPECT_EQ(read_file(json).substr(0, 1), "{");
}

// ---- packets compressed inside the file ----

// `bytes` as a TracePacket's for_testing field (900): a valid packet body.
std::string as_for_testing(const std::string& bytes) {
  ProtoBuffer packet;
  packet.field_bytes(900, bytes);
  return std::string(packet.view());
}

// `bytes` of noise that does not compress, the same for the same `seed`.
std::string noise_bytes(size_t bytes, uint64_t seed) {
  std::string noise(bytes, '\0');
  for (char& c : noise) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    c = static_cast<char>(seed >> 56);
  }
  return noise;
}

// A packet stream of `count` packets of varied sizes and content, and one
// of 700 KB of noise, too big for a bundle even compressed.
std::vector<std::string> sample_packets(size_t count) {
  std::vector<std::string> packets;
  for (size_t i = 0; i < count; ++i) {
    std::string body;
    const size_t size = 5 + (i * 7919) % 3000;
    for (size_t k = 0; k < size; ++k) body += static_cast<char>(k % 17 == 0 ? i : 'a' + k % 5);
    packets.push_back(packet_field(as_for_testing(body)));
    if (i == count / 2) packets.push_back(packet_field(as_for_testing(noise_bytes(700 * 1024, 0x12345678))));
  }
  return packets;
}

void write_split(tools::emit::ProtoOutput& out, const std::vector<std::string>& packets) {
  // Each packet as its tag and length, then its body in up to three pieces.
  for (const std::string& packet : packets) {
    size_t header = 2;
    while (static_cast<uint8_t>(packet[header - 1]) >= 0x80) ++header;
    ASSERT_TRUE(out.write(std::string_view(packet).substr(0, header)));
    const size_t body = packet.size() - header;
    ASSERT_TRUE(out.write(std::string_view(packet).substr(header, body / 3)));
    ASSERT_TRUE(out.write(std::string_view(packet).substr(header + body / 3)));
  }
}

TEST(ProtoOutput, BundlesHoldWholePacketsAndExpandToTheSameStream) {
  for (const auto compression : {tools::emit::PacketCompression::kDeflate, tools::emit::PacketCompression::kZstd}) {
    for (const bool thread : {true, false}) {
      SCOPED_TRACE(compression == tools::emit::PacketCompression::kDeflate ? "deflate" : "zstd");
      SCOPED_TRACE(thread ? "on a compression thread" : "shared, no compression thread");
      const std::string file = temp_path("bundles.pftrace");
      const std::vector<std::string> packets = sample_packets(3000);
      std::string stream;
      for (const std::string& packet : packets) stream += packet;
      std::string error;
      auto out = tools::emit::ProtoOutput::create(file, false, compression, thread, &error);
      ASSERT_NE(out, nullptr) << error;
      write_split(*out, packets);
      ASSERT_TRUE(out->close()) << out->error();
      const std::string data = read_file(file);
      EXPECT_EQ(out->written(), stream.size());
      EXPECT_EQ(out->file_bytes(), data.size());
      EXPECT_LT(data.size(), stream.size() / 3);
      size_t bundles = 0;
      const std::string expanded = expand_bundles(data, &bundles);
      EXPECT_TRUE(expanded == stream) << "the packets differ from what was written";
      EXPECT_GT(bundles, 10u);  // ~4.5 MB of packets in 256 KiB blocks
      // The noise did not fit a bundle: it stands as the plain packet it was.
      size_t plain = 0;
      for (const Field& top : decode(data))
        if (find(decode(top.bytes), 50) == nullptr && find(decode(top.bytes), 133) == nullptr) ++plain;
      EXPECT_GE(plain, 1u);
    }
  }
}

TEST(ProtoOutput, ABlockThatDoesNotCompressIsStillBundledWithinTheLimit) {
  // 200 KiB of noise: deflate can only store it, and the stored form (input
  // plus block headers) must fit the output room and the bundle limit.
  const std::string packet = packet_field(as_for_testing(noise_bytes(200 * 1024, 0x9e3779b97f4a7c15ull)));
  for (const auto compression : {tools::emit::PacketCompression::kDeflate, tools::emit::PacketCompression::kZstd}) {
    SCOPED_TRACE(compression == tools::emit::PacketCompression::kDeflate ? "deflate" : "zstd");
    const std::string file = temp_path("noise.pftrace");
    std::string error;
    auto out = tools::emit::ProtoOutput::create(file, false, compression, false, &error);
    ASSERT_NE(out, nullptr) << error;
    ASSERT_TRUE(out->write(packet));
    ASSERT_TRUE(out->close()) << out->error();
    const std::string data = read_file(file);
    size_t bundles = 0;
    EXPECT_TRUE(expand_bundles(data, &bundles) == packet) << "the packet differs from what was written";
    EXPECT_EQ(bundles, 1u) << "the noise was written plain, not bundled";
  }
}

TEST(ProtoOutput, SharedBlocksAreCompressedByWhoeverHelpsAndWrittenInOrder) {
  for (const auto compression : {tools::emit::PacketCompression::kDeflate, tools::emit::PacketCompression::kZstd}) {
    SCOPED_TRACE(compression == tools::emit::PacketCompression::kDeflate ? "deflate" : "zstd");
    const std::vector<std::string> packets = sample_packets(3000);  // ~17 blocks
    std::string stream;
    for (const std::string& packet : packets) stream += packet;
    std::string error;
    {
      // Nobody helps while writing: the writer compresses all but the last
      // kSharedBlocks waiting ones, which help() then takes one by one.
      const std::string file = temp_path("shared.pftrace");
      auto out = tools::emit::ProtoOutput::create(file, false, compression, false, &error);
      ASSERT_NE(out, nullptr) << error;
      write_split(*out, packets);
      size_t helped = 0;
      while (out->help()) ++helped;
      EXPECT_EQ(helped, tools::emit::ProtoOutput::kSharedBlocks);
      ASSERT_TRUE(out->close()) << out->error();
      const std::string data = read_file(file);
      EXPECT_EQ(out->file_bytes(), data.size());
      EXPECT_TRUE(expand_bundles(data) == stream) << "the packets differ from what was written";
    }
    {
      // A helper thread takes blocks while the writer writes (and under
      // ThreadSanitizer, nothing races).
      const std::string file = temp_path("shared_helper.pftrace");
      auto out = tools::emit::ProtoOutput::create(file, false, compression, false, &error);
      ASSERT_NE(out, nullptr) << error;
      std::atomic<bool> stop{false};
      std::thread helper([&] {
        while (!stop.load()) {
          if (!out->help()) std::this_thread::yield();
        }
      });
      write_split(*out, packets);
      write_split(*out, packets);
      stop = true;
      helper.join();
      ASSERT_TRUE(out->close()) << out->error();
      const std::string data = read_file(file);
      EXPECT_TRUE(expand_bundles(data) == stream + stream) << "the packets differ from what was written";
    }
  }
}

// Fills this thread's next `bytes` of stack with the 16-bit `value`, so that
// a read of uninitialised stack memory (by the compression library) sees
// something other than on another thread.
[[gnu::noinline]] void poison_stack(size_t bytes, uint16_t value) {
  auto* stack = static_cast<volatile uint16_t*>(__builtin_alloca(bytes));
  for (size_t i = 0; i < bytes / 2; ++i) stack[i] = value;
}

TEST(ProtoOutput, TheBytesDoNotDependOnWhichThreadCompressedABlock) {
  // Output that differs from run to run defeats caching and comparing
  // traces. Two ways ISA-L 2.30 broke this, both caught here: its stateless
  // init leaves the window size (hist_bits) as it finds it, so a stream on
  // the stack took whatever was there; and at levels 1 to 3 a block now and
  // then compressed differently in one process (valid either way; level 0,
  // the one used, never did in hundreds of rounds).
  const std::vector<std::string> packets = sample_packets(3000);
  constexpr size_t kPoison = 512 * 1024;
  std::string error;
  std::string alone;
  {
    poison_stack(kPoison, 1);
    const std::string file = temp_path("alone.pftrace");
    auto out = tools::emit::ProtoOutput::create(file, false, tools::emit::PacketCompression::kDeflate, false, &error);
    ASSERT_NE(out, nullptr) << error;
    write_split(*out, packets);
    write_split(*out, packets);
    ASSERT_TRUE(out->close()) << out->error();
    alone = read_file(file);
  }
  for (int round = 0; round < 4; ++round) {
    const std::string file = temp_path("helped.pftrace");
    auto out = tools::emit::ProtoOutput::create(file, false, tools::emit::PacketCompression::kDeflate, false, &error);
    ASSERT_NE(out, nullptr) << error;
    std::atomic<bool> stop{false};
    size_t helped = 0;
    std::thread helper([&] {
      while (!stop.load()) {
        poison_stack(kPoison, static_cast<uint16_t>(9 + round));
        if (out->help()) ++helped;
        else std::this_thread::yield();
      }
    });
    poison_stack(kPoison, 1);
    write_split(*out, packets);
    write_split(*out, packets);
    stop = true;
    helper.join();
    ASSERT_TRUE(out->close()) << out->error();
    EXPECT_TRUE(read_file(file) == alone) << "round " << round << ": the helper compressed " << helped << " blocks";
    if (read_file(file) != alone) { std::ofstream("/tmp/q/h.bin", std::ios::binary) << read_file(file); std::ofstream("/tmp/q/a.bin", std::ios::binary) << alone; }
  }
}

TEST(ProtoOutput, BytesThatAreNotPacketsEndTheBundlingAndAreWrittenAsTheyCame) {
  for (const bool thread : {true, false}) {
    SCOPED_TRACE(thread ? "on a compression thread" : "shared, no compression thread");
    const std::string file = temp_path("unframed.pftrace");
    const std::vector<std::string> packets = sample_packets(300);
    std::string error;
    auto out = tools::emit::ProtoOutput::create(file, false, tools::emit::PacketCompression::kDeflate, thread, &error);
    ASSERT_NE(out, nullptr) << error;
    write_split(*out, packets);
    const std::string stray = "not a packet";
    ASSERT_TRUE(out->write(stray));
    ASSERT_TRUE(out->write(packets.front()));
    ASSERT_TRUE(out->close());
    const std::string data = read_file(file);
    std::string stream;
    for (const std::string& packet : packets) stream += packet;
    const std::string tail = stray + packets.front();
    ASSERT_GT(data.size(), tail.size());
    EXPECT_EQ(data.substr(data.size() - tail.size()), tail);  // plain, in order
    EXPECT_TRUE(expand_bundles(data.substr(0, data.size() - tail.size())) == stream);
    EXPECT_EQ(out->written(), stream.size() + tail.size());
  }
}

TEST(ProtoOutput, WithoutCompressionThePacketsAreWrittenAsTheyCame) {
  const std::string file = temp_path("plain.pftrace");
  const std::vector<std::string> packets = sample_packets(200);
  std::string error;
  auto out = tools::emit::ProtoOutput::create(file, false, tools::emit::PacketCompression::kNone, true, &error);
  ASSERT_NE(out, nullptr) << error;
  write_split(*out, packets);
  ASSERT_TRUE(out->close());
  std::string stream;
  for (const std::string& packet : packets) stream += packet;
  EXPECT_TRUE(read_file(file) == stream);
}

TEST(ConvertProtobuf, PacketsAreDeflatedByDefaultAndHoldWhatTheUncompressedFileHolds) {
  const std::string input = launches_trace(3000);
  std::map<std::string, std::string> files;
  for (const std::string compression : {"", "none", "zstd"}) {
    tools::ConvertCommand command;
    command.inputs = {input};
    command.output = temp_path("packets-" + compression + ".pftrace");
    if (!compression.empty()) command.compression = compression;
    command.quiet = true;
    std::FILE* err = std::tmpfile();
    ASSERT_EQ(tools::run_convert(command, err), 0);
    std::fclose(err);
    files[compression] = read_file(command.output);
  }
  size_t deflated = 0, zstd = 0, none = 0;
  const std::string from_deflate = expand_bundles(files[""], &deflated);
  const std::string from_zstd = expand_bundles(files["zstd"], &zstd);
  expand_bundles(files["none"], &none);
  EXPECT_GT(deflated, 0u);
  EXPECT_GT(zstd, 0u);
  EXPECT_EQ(none, 0u);
  EXPECT_TRUE(from_deflate == files["none"]) << "deflated packets differ from the plain file";
  EXPECT_TRUE(from_zstd == files["none"]) << "zstd packets differ from the plain file";
  EXPECT_LT(files[""].size() * 4, files["none"].size());
  for (const auto& [name, data] : files) {
    if (name.empty()) continue;
    const CommandOutput check = run_shell(std::string(PROFLAUNCH_PYTHON3) + " " + PFTRACE_CHECKER + " " +
                                          temp_path("packets-" + name + ".pftrace"));
    EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  }
}

}  // namespace
}  // namespace proflaunch::testing
