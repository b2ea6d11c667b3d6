#include "formats/reader.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "formats/chunk_encoder.h"
#include "formats/file_header_check.h"
#include "formats/record_kinds.h"

namespace proflaunch::format {
namespace {

// Bytes examined per read while scanning for the next chunk after damage.
constexpr size_t kScanWindowBytes = 64 * 1024;

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%" PRIx64, value);
  return text;
}

bool parse_chunk_header(const uint8_t* data, const ReaderLimits& limits, ChunkHeader* out) {
  ChunkHeader header;
  std::memcpy(&header, data, sizeof header);
  if (header.magic != kChunkMagic) return false;
  if (crc32(&header, offsetof(ChunkHeader, header_crc32)) != header.header_crc32) return false;
  if (header.payload_bytes > limits.max_payload_bytes) return false;
  *out = header;
  return true;
}

bool is_known_chunk_kind(uint16_t kind) {
  return kind == static_cast<uint16_t>(ChunkKind::kDefinitions) ||
         kind == static_cast<uint16_t>(ChunkKind::kEvents);
}

}  // namespace

// One read() over the file: the state that lives only as long as the pass.
class TraceReader::Pass {
 public:
  Pass(TraceReader& reader, RecordVisitor& visitor, ChunkSelection selection)
      : reader_(reader), source_(*reader.source_), visitor_(visitor), selection_(selection) {}

  ReadReport run() {
    const uint64_t file_bytes = source_.size();
    uint64_t offset = reader_.header_.header_bytes;
    while (offset < file_bytes) {
      if (!visitor_.keep_going()) {
        report_.stopped_early = true;
        break;
      }
      offset = step(offset, file_bytes);
    }
    return std::move(report_);
  }

 private:
  // Handles whatever starts at `offset` and returns where to continue.
  uint64_t step(uint64_t offset, uint64_t file_bytes) {
    const uint64_t remaining = file_bytes - offset;
    if (remaining < sizeof(ChunkHeader)) return cut_tail(offset, file_bytes);

    const size_t probe = static_cast<size_t>(std::min<uint64_t>(remaining, sizeof(FileHeader)));
    const uint8_t* bytes = source_.view(offset, probe, reader_.scratch_);
    if (bytes == nullptr) return cut_tail(offset, file_bytes);

    if (is_acceptable_file_header(bytes, probe)) {
      // Part files concatenated as they are (cat a.part b.part): each brings
      // its own header. Not corruption.
      FileHeader embedded;
      std::memcpy(&embedded, bytes, sizeof embedded);
      ++report_.embedded_file_headers;
      return std::min<uint64_t>(offset + embedded.header_bytes, file_bytes);
    }

    ChunkHeader header;
    if (!parse_chunk_header(bytes, reader_.limits_, &header))
      return skip_damage(offset, file_bytes, "no valid chunk header");

    const uint64_t chunk_end = offset + sizeof(ChunkHeader) + header.payload_bytes;
    if (chunk_end > file_bytes) {
      // Either the cut tail of the file, or a chunk cut short by a writer
      // that died, with other data appended after it.
      const uint64_t next = find_next_chunk(offset + 1, file_bytes);
      if (next >= file_bytes) return cut_tail(offset, file_bytes);
      return skip_to(offset, next, "chunk extends past the end of the file");
    }

    if (!is_known_chunk_kind(header.kind) || (header.flags & ~kKnownChunkFlags) != 0) {
      ++report_.chunks_unknown_kind;  // a newer writer's chunk: skipped, whole
      return chunk_end;
    }
    if (!selected(header.kind)) {
      ++report_.chunks_not_decoded;
      return chunk_end;
    }

    const uint8_t* payload = source_.view(offset + sizeof(ChunkHeader), header.payload_bytes,
                                          reader_.scratch_);
    if (payload == nullptr) return cut_tail(offset, file_bytes);
    const DecodeStatus status =
        reader_.decoder_.decode(payload, header.payload_bytes, reader_.limits_.max_content_bytes);
    if (status != DecodeStatus::kOk) {
      const uint64_t next = find_next_chunk(offset + 1, file_bytes);
      ++report_.chunks_corrupt_payload;
      report_.bytes_skipped_payload += next - offset;
      return skip_to(offset, next, "chunk payload: " + std::string(describe(status)));
    }

    ++report_.chunks_ok;
    deliver(header, offset);
    return chunk_end;
  }

  bool selected(uint16_t chunk_kind) const {
    switch (selection_) {
      case ChunkSelection::kAll: return true;
      case ChunkSelection::kDefinitionsOnly:
        return chunk_kind == static_cast<uint16_t>(ChunkKind::kDefinitions);
      case ChunkSelection::kEventsOnly:
        return chunk_kind == static_cast<uint16_t>(ChunkKind::kEvents);
    }
    return true;
  }

  void deliver(const ChunkHeader& header, uint64_t offset) {
    const uint8_t* content = reader_.decoder_.content();
    const size_t content_bytes = reader_.decoder_.content_bytes();
    visitor_.on_chunk(ChunkInfo{offset, header.kind, header.section_id, header.payload_bytes,
                                content_bytes});

    RecordView view{};
    view.section_id = header.section_id;
    view.chunk_kind = static_cast<ChunkKind>(header.kind);
    view.chunk_offset = offset;
    view.tid = 0;
    const bool delta_coded = (header.flags & kChunkFlagRecordDelta) != 0;
    if (delta_coded) reader_.delta_.reset();
    // The decoder's buffer is ours until the next chunk: undo the delta in place.
    auto* mutable_content = const_cast<uint8_t*>(content);
    size_t at = 0;
    while (at < content_bytes) {
      if (content_bytes - at < sizeof(RecordHeader)) {
        malformed(offset, "chunk content ends inside a record header");
        return;
      }
      RecordHeader record;
      std::memcpy(&record, content + at, sizeof record);
      if (record.bytes < sizeof(RecordHeader) || record.bytes > content_bytes - at) {
        // The size prefix is the framing: past a bad one nothing in this
        // chunk can be trusted.
        malformed(offset, "record size " + std::to_string(record.bytes) + " at content offset " +
                              std::to_string(at) + " breaks the chunk's framing");
        return;
      }
      if (delta_coded) reader_.delta_.decode(mutable_content + at, record.bytes);
      const uint16_t fixed_bytes = record.kind < kMinimumRecordBytes.size() ? kMinimumRecordBytes[record.kind] : 0;
      if (fixed_bytes == 0) {
        ++report_.records_unknown_kind;
      } else if (record.bytes < fixed_bytes) {
        malformed(offset, "record of kind " + std::to_string(record.kind) + " has " +
                              std::to_string(record.bytes) + " bytes, needs " + std::to_string(fixed_bytes));
      } else {
        view.kind = record.kind;
        view.bytes = record.bytes;
        view.data = content + at;
        if (record.kind == static_cast<uint16_t>(RecordKind::kThreadBatch))
          view.tid = view.as<ThreadBatchRecord>().tid;
        ++report_.records;
        visitor_.on_record(view);
      }
      at += record.bytes;
    }
  }

  // Finds the next offset in [from, file_bytes) where a valid chunk header
  // or an acceptable file header starts; file_bytes when there is none.
  uint64_t find_next_chunk(uint64_t from, uint64_t file_bytes) {
    // Windows overlap by a header's length so a header across a window
    // boundary is still seen whole.
    constexpr size_t kOverlap = sizeof(FileHeader) - 1;
    for (uint64_t base = from; base < file_bytes; base += kScanWindowBytes) {
      const size_t window =
          static_cast<size_t>(std::min<uint64_t>(kScanWindowBytes + kOverlap, file_bytes - base));
      const uint8_t* bytes = source_.view(base, window, scan_scratch_);
      if (bytes == nullptr) return file_bytes;
      const size_t candidates_end = std::min(window, kScanWindowBytes);
      // Both magics start with 'P'.
      const uint8_t* p = bytes;
      const uint8_t* end = bytes + candidates_end;
      while ((p = static_cast<const uint8_t*>(std::memchr(p, 'P', static_cast<size_t>(end - p)))) !=
             nullptr) {
        const size_t available = window - static_cast<size_t>(p - bytes);
        ChunkHeader header;
        if (available >= sizeof(ChunkHeader) && parse_chunk_header(p, reader_.limits_, &header))
          return base + static_cast<uint64_t>(p - bytes);
        if (is_acceptable_file_header(p, available)) return base + static_cast<uint64_t>(p - bytes);
        ++p;
      }
    }
    return file_bytes;
  }

  uint64_t skip_damage(uint64_t offset, uint64_t file_bytes, const std::string& reason) {
    return skip_to(offset, find_next_chunk(offset + 1, file_bytes), reason);
  }

  uint64_t skip_to(uint64_t offset, uint64_t next, const std::string& reason) {
    ++report_.chunks_corrupt;
    report_.bytes_skipped += next - offset;
    note(offset, reason + "; skipped " + std::to_string(next - offset) + " bytes");
    return next;
  }

  uint64_t cut_tail(uint64_t offset, uint64_t file_bytes) {
    report_.truncated_tail = true;
    report_.truncated_tail_offset = offset;
    report_.bytes_skipped += file_bytes - offset;
    note(offset, "file ends inside a chunk (truncated); " + std::to_string(file_bytes - offset) +
                     " bytes at the end ignored");
    return file_bytes;
  }

  void malformed(uint64_t chunk_offset, const std::string& reason) {
    ++report_.records_malformed;
    note(chunk_offset, "malformed record in the chunk at " + hex(chunk_offset) + ": " + reason);
  }

  void note(uint64_t offset, std::string reason) {
    if (report_.notes.size() < ReadReport::kMaxNotes)
      report_.notes.push_back(CorruptionNote{offset, std::move(reason)});
  }

  TraceReader& reader_;
  ByteSource& source_;
  RecordVisitor& visitor_;
  ChunkSelection selection_;
  ReadReport report_;
  std::vector<uint8_t> scan_scratch_;
};

TraceReader::TraceReader(std::unique_ptr<ByteSource> source, const FileHeader& header,
                         ReaderLimits limits)
    : source_(std::move(source)), header_(header), limits_(limits) {}

std::unique_ptr<TraceReader> TraceReader::open(std::unique_ptr<ByteSource> source,
                                               std::string* error, ReaderLimits limits) {
  std::vector<uint8_t> scratch;
  const uint64_t file_bytes = source->size();
  const size_t probe = static_cast<size_t>(std::min<uint64_t>(file_bytes, sizeof(FileHeader)));
  const uint8_t* bytes = probe > 0 ? source->view(0, probe, scratch) : nullptr;
  if (probe > 0 && bytes == nullptr) {
    *error = source->name() + ": cannot read the file header";
    return nullptr;
  }
  const auto header = check_file_header(bytes, probe, file_bytes, source->name(), error);
  if (!header) return nullptr;
  return std::unique_ptr<TraceReader>(new TraceReader(std::move(source), *header, limits));
}

std::unique_ptr<TraceReader> TraceReader::open_file(const std::string& path, std::string* error,
                                                    ReaderLimits limits) {
  auto source = open_file_source(path, error);
  if (!source) return nullptr;
  return open(std::move(source), error, limits);
}

ReadReport TraceReader::read(RecordVisitor& visitor, ChunkSelection selection) {
  return Pass(*this, visitor, selection).run();
}

ReadReport combine_passes(const ReadReport& definitions_pass, const ReadReport& events_pass) {
  // Header-level findings (skipped bytes, cut tail, unknown chunk kinds) are
  // the same in both passes: take them once. Payload-level findings come
  // from whichever pass decoded the chunk.
  ReadReport combined = events_pass;
  combined.chunks_ok = definitions_pass.chunks_ok + events_pass.chunks_ok;
  combined.chunks_not_decoded = 0;
  combined.records = definitions_pass.records + events_pass.records;
  combined.records_unknown_kind =
      definitions_pass.records_unknown_kind + events_pass.records_unknown_kind;
  combined.records_malformed = definitions_pass.records_malformed + events_pass.records_malformed;
  // A payload that fails to decode is only seen by the pass that decoded it;
  // the other stepped over it by its header.
  combined.chunks_corrupt_payload =
      definitions_pass.chunks_corrupt_payload + events_pass.chunks_corrupt_payload;
  combined.chunks_corrupt = events_pass.chunks_corrupt - events_pass.chunks_corrupt_payload +
                            combined.chunks_corrupt_payload;
  combined.bytes_skipped_payload =
      definitions_pass.bytes_skipped_payload + events_pass.bytes_skipped_payload;
  combined.bytes_skipped = events_pass.bytes_skipped - events_pass.bytes_skipped_payload +
                           combined.bytes_skipped_payload;
  combined.notes = definitions_pass.notes;
  for (const auto& note : events_pass.notes) {
    const bool seen = std::any_of(combined.notes.begin(), combined.notes.end(), [&](const auto& n) {
      return n.file_offset == note.file_offset && n.reason == note.reason;
    });
    if (!seen && combined.notes.size() < ReadReport::kMaxNotes) combined.notes.push_back(note);
  }
  std::sort(combined.notes.begin(), combined.notes.end(),
            [](const auto& a, const auto& b) { return a.file_offset < b.file_offset; });
  combined.stopped_early = definitions_pass.stopped_early || events_pass.stopped_early;
  return combined;
}

std::string summarize(const ReadReport& report) {
  std::string text = std::to_string(report.chunks_ok) + " chunks ok, " +
                     std::to_string(report.chunks_corrupt) + " corrupt, " +
                     std::to_string(report.bytes_skipped) + " bytes skipped, " +
                     (report.truncated_tail ? "tail truncated" : "tail complete");
  if (report.records_malformed > 0)
    text += ", " + std::to_string(report.records_malformed) + " malformed records";
  if (report.records_unknown_kind > 0)
    text += ", " + std::to_string(report.records_unknown_kind) + " records of unknown kinds skipped";
  if (report.chunks_unknown_kind > 0)
    text += ", " + std::to_string(report.chunks_unknown_kind) + " chunks of unknown kinds skipped";
  return text;
}

}  // namespace proflaunch::format
