// Streaming reader for proflaunch trace files (format v1; formats/README.md).
//
// Opening validates the file header. Each read() is one pass over the chunks
// in file order, holding one chunk in memory at a time, that hands every
// record to a visitor together with its section and thread. A corrupt or cut
// chunk is skipped and the pass goes on at the next chunk whose header
// verifies; the returned ReadReport says exactly what was recovered.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "formats/byte_source.h"
#include "formats/chunk_decoder.h"
#include "formats/record_delta.h"
#include "formats/records.h"

namespace proflaunch::format {

struct ReaderLimits {
  uint32_t max_payload_bytes = kMaxChunkPayloadBytes;
  uint32_t max_content_bytes = kMaxChunkContentBytes;
};

// Which chunks a pass decompresses. The others are stepped over by their
// header without reading their payload.
enum class ChunkSelection {
  kAll,
  kDefinitionsOnly,  // the cheap first pass of a converter
  kEventsOnly,
};

// One record as the reader hands it out. `data` points at the RecordHeader
// and is valid only during the visitor call.
struct RecordView {
  uint16_t kind;          // RecordKind; may be a kind this reader does not know
  uint16_t bytes;         // whole record, >= minimum_record_bytes(kind) for known kinds
  const uint8_t* data;
  uint64_t section_id;
  uint32_t tid;           // from the last ThreadBatch in this chunk, 0 before one
  ChunkKind chunk_kind;
  uint64_t chunk_offset;  // file offset of the chunk header

  RecordKind record_kind() const { return static_cast<RecordKind>(kind); }

  // Copies the fixed part out (records are packed and unaligned). Only valid
  // for the struct of `kind`: the reader guarantees bytes >= the kind's
  // minimum_record_bytes; fields an older, shorter version lacks read as 0.
  template <typename T>
  T as() const {
    T value;
    if (bytes >= sizeof(T)) {
      std::memcpy(&value, data, sizeof(T));
    } else {
      std::memset(static_cast<void*>(&value), 0, sizeof(T));
      std::memcpy(&value, data, bytes);
    }
    return value;
  }

  // Bytes after the fixed part of `T` (StringDef text; unknown extensions).
  template <typename T>
  std::string_view tail() const {
    if (bytes <= sizeof(T)) return {};
    return std::string_view(reinterpret_cast<const char*>(data) + sizeof(T), bytes - sizeof(T));
  }
};

struct ChunkInfo {
  uint64_t file_offset;
  uint16_t kind;  // ChunkKind
  uint64_t section_id;
  uint32_t payload_bytes;
  uint64_t content_bytes;
};

class RecordVisitor {
 public:
  virtual ~RecordVisitor() = default;
  // Before the records of each decoded chunk.
  virtual void on_chunk(const ChunkInfo&) {}
  virtual void on_record(const RecordView& record) = 0;
  // Checked between chunks: return false to end the pass early.
  virtual bool keep_going() { return true; }
};

// Where and why the reader skipped bytes. The report keeps the first few.
struct CorruptionNote {
  uint64_t file_offset;
  std::string reason;
};

struct ReadReport {
  uint64_t chunks_ok = 0;           // decoded and delivered
  uint64_t chunks_corrupt = 0;      // bad header, bad payload, or cut short followed by more data
  uint64_t chunks_corrupt_payload = 0;  // of chunks_corrupt: valid header, payload failed to decode
  uint64_t chunks_not_decoded = 0;  // valid headers stepped over because of the ChunkSelection
  uint64_t chunks_unknown_kind = 0; // valid headers of chunk kinds this reader does not know
  uint64_t records = 0;             // handed to the visitor
  uint64_t records_unknown_kind = 0;  // skipped by size
  uint64_t records_malformed = 0;     // shorter than their struct, or framing broken inside a chunk
  uint64_t bytes_skipped = 0;       // not part of any accepted chunk (corrupt regions, cut tail)
  uint64_t bytes_skipped_payload = 0;  // of bytes_skipped: after chunks with a bad payload
  uint64_t embedded_file_headers = 0;  // FileHeaders met between chunks (concatenated part files)
  bool truncated_tail = false;      // the file ends inside a chunk
  uint64_t truncated_tail_offset = 0;  // where the cut chunk starts
  std::vector<CorruptionNote> notes;   // at most kMaxNotes, in file order
  bool stopped_early = false;          // the visitor asked to stop

  static constexpr size_t kMaxNotes = 16;

  bool clean() const {
    return chunks_corrupt == 0 && !truncated_tail && bytes_skipped == 0 && records_malformed == 0;
  }
};

// A converter reads the file twice: definitions first, then events. Each
// pass sees the same headers (so the same skipped bytes and cut tail) but
// decodes different chunks; this merges the two into one picture.
ReadReport combine_passes(const ReadReport& definitions_pass, const ReadReport& events_pass);

// "42 chunks ok, 1 corrupt, 1234 bytes skipped, tail truncated"
std::string summarize(const ReadReport& report);

class TraceReader {
 public:
  // Validates the file header. On failure returns nullptr and sets `error` to
  // one line that names the file and what is wrong with it.
  static std::unique_ptr<TraceReader> open(std::unique_ptr<ByteSource> source, std::string* error,
                                           ReaderLimits limits = {});
  static std::unique_ptr<TraceReader> open_file(const std::string& path, std::string* error,
                                                ReaderLimits limits = {});

  const FileHeader& header() const { return header_; }
  uint64_t file_bytes() const { return source_->size(); }
  const std::string& name() const { return source_->name(); }

  // One pass over all chunks; can be repeated.
  ReadReport read(RecordVisitor& visitor, ChunkSelection selection = ChunkSelection::kAll);

 private:
  TraceReader(std::unique_ptr<ByteSource> source, const FileHeader& header, ReaderLimits limits);

  class Pass;
  std::unique_ptr<ByteSource> source_;
  FileHeader header_;
  ReaderLimits limits_;
  ChunkDecoder decoder_;
  RecordDeltaCoder delta_;
  std::vector<uint8_t> scratch_;
};

}  // namespace proflaunch::format
