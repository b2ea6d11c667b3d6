// Test helper: keeps a copy of every record the reader hands out.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "formats/reader.h"

namespace proflaunch::format::testing {

struct CollectedRecord {
  uint16_t kind;
  uint64_t section_id;
  uint32_t tid;
  ChunkKind chunk_kind;
  std::vector<uint8_t> bytes;

  template <typename T>
  T as() const {
    T value;
    std::memcpy(&value, bytes.data(), sizeof(T));
    return value;
  }
};

class CollectingVisitor : public RecordVisitor {
 public:
  void on_chunk(const ChunkInfo& chunk) override { chunks.push_back(chunk); }
  void on_record(const RecordView& record) override {
    records.push_back(CollectedRecord{record.kind, record.section_id, record.tid,
                                      record.chunk_kind,
                                      std::vector<uint8_t>(record.data, record.data + record.bytes)});
  }

  std::vector<ChunkInfo> chunks;
  std::vector<CollectedRecord> records;
};

inline std::unique_ptr<TraceReader> open_bytes(const std::vector<uint8_t>& bytes,
                                               std::string* error, ReaderLimits limits = {}) {
  return TraceReader::open(make_memory_source(bytes.data(), bytes.size(), "test.trace"), error,
                           limits);
}

}  // namespace proflaunch::format::testing
