#include "tools/fuzz/record_list.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "formats/byte_source.h"
#include "formats/chunk_encoder.h"
#include "formats/reader.h"
#include "formats/record_kinds.h"

namespace proflaunch::fuzz {

using namespace proflaunch::format;

std::vector<RecordChunk> parse_record_list(const uint8_t* data, size_t size) {
  std::vector<RecordChunk> chunks;
  size_t at = 0;
  while (at + 4 <= size) {
    RecordChunk chunk;
    chunk.kind = data[at];
    chunk.section = data[at + 1];
    const size_t length = std::min<size_t>(data[at + 2] | size_t{data[at + 3]} << 8, size - at - 4);
    const uint8_t* content = data + at + 4;
    size_t offset = 0;
    while (offset + sizeof(RecordHeader) <= length) {
      RecordHeader header;
      std::memcpy(&header, content + offset, sizeof header);
      if (header.bytes < sizeof header || header.bytes > length - offset) break;
      chunk.records.emplace_back(content + offset, content + offset + header.bytes);
      offset += header.bytes;
    }
    chunk.tail.assign(content + offset, content + length);
    chunks.push_back(std::move(chunk));
    at += 4 + length;
  }
  return chunks;
}

std::vector<uint8_t> serialize_record_list(const std::vector<RecordChunk>& chunks) {
  std::vector<uint8_t> out;
  for (const RecordChunk& chunk : chunks) {
    std::vector<uint8_t> content;
    for (const auto& record : chunk.records) {
      if (content.size() + record.size() > 0xFFFF) break;
      content.insert(content.end(), record.begin(), record.end());
    }
    if (content.size() + chunk.tail.size() <= 0xFFFF) content.insert(content.end(), chunk.tail.begin(), chunk.tail.end());
    out.push_back(chunk.kind);
    out.push_back(chunk.section);
    out.push_back(static_cast<uint8_t>(content.size()));
    out.push_back(static_cast<uint8_t>(content.size() >> 8));
    out.insert(out.end(), content.begin(), content.end());
  }
  return out;
}

std::vector<uint8_t> to_trace(const uint8_t* data, size_t size) {
  const FileHeader header = make_file_header();
  std::vector<uint8_t> file(reinterpret_cast<const uint8_t*>(&header),
                            reinterpret_cast<const uint8_t*>(&header) + sizeof header);
  static ChunkEncoder encoder;
  std::vector<uint8_t> frame;
  size_t at = 0;
  while (at + 4 <= size) {
    const auto kind = static_cast<ChunkKind>(1 + (data[at] + 1) % 2);  // 1 and 2 stay, others wrap
    const uint64_t section = kSectionBase + data[at + 1];
    const size_t length = std::min<size_t>(data[at + 2] | size_t{data[at + 3]} << 8, size - at - 4);
    frame.resize(max_encoded_chunk_bytes(length));
    const size_t bytes = encoder.encode(kind, section, data + at + 4, length, frame.data(), frame.size());
    file.insert(file.end(), frame.begin(), frame.begin() + static_cast<long>(bytes));
    at += 4 + length;
  }
  return file;
}

namespace {

// Collects the records of each chunk as the reader delivers them (delta
// coding undone), with the chunk's kind and section.
class ChunkCollector : public RecordVisitor {
 public:
  void on_chunk(const ChunkInfo&) override {
    start_ = true;
    batch_.clear();
  }
  void on_record(const RecordView& record) override {
    // The list's chunks hold at most 64 KiB: a longer chunk is cut, and the
    // next part starts with the ThreadBatch in force so its records keep their thread.
    const bool full = !chunks.empty() && bytes_ + record.bytes > 60000;
    if (start_ || full) {
      RecordChunk chunk;
      chunk.kind = static_cast<uint8_t>(record.chunk_kind);
      const auto [it, added] = sections_.emplace(record.section_id, sections_.size());
      chunk.section = static_cast<uint8_t>(it->second);
      if (full && !batch_.empty()) chunk.records.push_back(batch_);
      bytes_ = batch_.size();
      chunks.push_back(std::move(chunk));
      start_ = false;
    }
    chunks.back().records.emplace_back(record.data, record.data + record.bytes);
    bytes_ += record.bytes;
    if (record.record_kind() == RecordKind::kThreadBatch) batch_ = chunks.back().records.back();
  }
  std::vector<RecordChunk> chunks;

 private:
  bool start_ = false;
  size_t bytes_ = 0;
  std::vector<uint8_t> batch_;
  std::map<uint64_t, size_t> sections_;
};

}  // namespace

bool from_trace(const std::vector<uint8_t>& trace, std::vector<uint8_t>* list, std::string* error) {
  auto reader = TraceReader::open(make_memory_source(trace.data(), trace.size(), "seed"), error);
  if (!reader) return false;
  ChunkCollector collector;
  reader->read(collector, ChunkSelection::kAll);
  *list = serialize_record_list(collector.chunks);
  return true;
}

namespace {

uint64_t load(const std::vector<uint8_t>& record, size_t offset, size_t width) {
  uint64_t value = 0;
  std::memcpy(&value, record.data() + offset, width);
  return value;
}

void store(std::vector<uint8_t>& record, size_t offset, size_t width, uint64_t value) {
  std::memcpy(record.data() + offset, &value, width);
}

uint16_t kind_of(const std::vector<uint8_t>& record) { return static_cast<uint16_t>(load(record, 0, 2)); }

}  // namespace

bool mutate_records(std::vector<RecordChunk>& chunks, std::mt19937_64& random) {
  std::vector<std::pair<size_t, size_t>> all;  // (chunk, record)
  for (size_t c = 0; c < chunks.size(); ++c)
    for (size_t r = 0; r < chunks[c].records.size(); ++r) all.emplace_back(c, r);
  if (all.empty()) return false;
  auto pick = [&](size_t n) { return static_cast<size_t>(random() % n); };
  const auto [c, r] = all[pick(all.size())];
  std::vector<uint8_t>& record = chunks[c].records[r];
  switch (pick(8)) {
    case 0:
    case 1:
    case 2:
    case 3: {  // one field: 8, 4, 2 or 1 bytes wide, past the header
      if (record.size() <= sizeof(RecordHeader)) return false;
      static constexpr size_t kWidths[] = {8, 4, 2, 1};
      size_t width = kWidths[pick(4)];
      while (width > record.size() - sizeof(RecordHeader)) width /= 2;
      const size_t slots = (record.size() - sizeof(RecordHeader)) / width;
      const size_t offset = sizeof(RecordHeader) + pick(slots) * width;
      const uint64_t old = load(record, offset, width);
      uint64_t value = 0;
      switch (pick(6)) {
        case 0: value = 0; break;
        case 1: value = 1; break;
        case 2: value = ~uint64_t{0}; break;
        case 3: value = old + pick(17) - 8; break;
        case 4: value = old ^ (uint64_t{1} << pick(width * 8)); break;
        default: {  // the same field of another record of this kind: ids that collide
          std::vector<const std::vector<uint8_t>*> same;
          for (const auto& [oc, orr] : all)
            if (kind_of(chunks[oc].records[orr]) == kind_of(record) && chunks[oc].records[orr].size() == record.size())
              same.push_back(&chunks[oc].records[orr]);
          value = load(*same[pick(same.size())], offset, width);
        }
      }
      store(record, offset, width, value);
      return true;
    }
    case 4: {  // duplicate a record in place, or into another chunk
      const std::vector<uint8_t> copy = record;
      RecordChunk& to = chunks[pick(chunks.size())];
      to.records.insert(to.records.begin() + static_cast<long>(pick(to.records.size() + 1)), copy);
      return true;
    }
    case 5:  // drop it
      chunks[c].records.erase(chunks[c].records.begin() + static_cast<long>(r));
      return true;
    case 6: {  // move it (out of order, into another chunk or section)
      const std::vector<uint8_t> moved = record;
      chunks[c].records.erase(chunks[c].records.begin() + static_cast<long>(r));
      RecordChunk& to = chunks[pick(chunks.size())];
      to.records.insert(to.records.begin() + static_cast<long>(pick(to.records.size() + 1)), moved);
      return true;
    }
    default: {  // retarget a chunk: another kind or section
      RecordChunk& chunk = chunks[c];
      if (pick(2) == 0) chunk.kind = static_cast<uint8_t>(3 - chunk.kind % 3);
      else chunk.section = static_cast<uint8_t>(pick(4));
      return true;
    }
  }
}

}  // namespace proflaunch::fuzz
