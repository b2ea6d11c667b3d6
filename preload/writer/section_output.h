// One section's output as the writer produces it: the part file, created by
// the first chunk that goes out and starting with the section's ProcessInfo
// and the definitions made so far, then Definitions and Events chunks, each
// compressed on its own (chunk_builder.h). Definitions taken from the store
// stay here until they are on disk, so a write that fails for now (out of
// descriptors) leaves them for the next. Writer thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "formats/records.h"
#include "preload/state/section.h"
#include "preload/writer/chunk_builder.h"
#include "preload/writer/part_file.h"

namespace proflaunch {

// What became of a section's event records, for SectionEnd and the verbose line.
struct SectionTotals {
  uint64_t written = 0;
  uint64_t dropped = 0;                // lost before they reached a chunk (LOST records say when)
  uint64_t lost_to_write_failure = 0;  // in chunks that could not be written or kept
};

class SectionOutput {
 public:
  bool init(const SectionIdentity& section) noexcept;
  // A new section (after a failed exec): nothing of it written yet.
  void begin(const SectionIdentity& section) noexcept;

  const SectionIdentity& section() const noexcept { return section_; }
  PartFile& file() noexcept { return file_; }
  SectionTotals& totals() noexcept { return totals_; }

  // The part for the first Events chunk: ProcessInfo and every definition
  // made so far. False once the output failed.
  bool ensure_open() noexcept;
  // Creates the part with the section's ProcessInfo, followed by the
  // pending definitions when asked (the flight recorder keeps its own).
  bool create(bool with_pending_definitions) noexcept;
  // The definitions made since the last time, ahead of the next chunk.
  bool write_pending_definitions() noexcept;
  // `content` (whole definition records) from `from` on, as Definitions
  // chunks; `written` says how far it got.
  bool write_definitions(const std::vector<uint8_t>& content, size_t from = 0, size_t* written = nullptr) noexcept;
  bool write_chunk(format::ChunkKind kind, const void* content, size_t bytes) noexcept;

  // A chunk compressed but not written (the flight recorder keeps it):
  // its size, 0 on failure; its bytes stay in encoded() until the next.
  size_t encode(format::ChunkKind kind, const void* content, size_t bytes) noexcept {
    return encoder_.encode(kind, section_.id, content, bytes);
  }
  const uint8_t* encoded() const noexcept { return encoder_.data(); }

 private:
  bool write_unwritten_definitions() noexcept;

  SectionIdentity section_;
  ChunkWriterBuffer encoder_;
  PartFile file_;
  std::vector<uint8_t> unwritten_definitions_;
  SectionTotals totals_;
};

}  // namespace proflaunch
