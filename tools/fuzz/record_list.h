// The input format of the proftrace commands fuzzer: a trace as a list of
// chunks, each holding its records uncompressed, so that mutations land on
// record fields instead of on zstd frames and CRCs the fuzzer cannot forge.
//
//   repeat { u8 chunk kind (1 Definitions, 2 Events; others wrap), u8 section
//            index, u16 LE content length, content (whole records) }
//
// to_trace() frames it as a real trace (file header, one compressed chunk
// per entry, section id = kSectionBase + index); from_trace() turns a real
// trace into this form (the seeds). mutate_records() is the record-level
// mutator: it changes one field of one record to a value that matters to the
// converter (0, 1, all ones, a neighbour, the same field of another record
// of that kind, so ids collide), or duplicates, drops or moves records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace proflaunch::fuzz {

inline constexpr uint64_t kSectionBase = 0x5EC7'0000;

struct RecordChunk {
  uint8_t kind = 2;
  uint8_t section = 0;
  std::vector<std::vector<uint8_t>> records;  // whole records, header included
  std::vector<uint8_t> tail;                  // bytes after the last whole record
};

// Parses `data`; a cut-off last entry is kept with what is there.
std::vector<RecordChunk> parse_record_list(const uint8_t* data, size_t size);
std::vector<uint8_t> serialize_record_list(const std::vector<RecordChunk>& chunks);

std::vector<uint8_t> to_trace(const uint8_t* data, size_t size);
// False with the reason when `trace` cannot be read at all.
bool from_trace(const std::vector<uint8_t>& trace, std::vector<uint8_t>* list, std::string* error);

// One record-level mutation of `chunks` (returns false when there is nothing
// to mutate).
bool mutate_records(std::vector<RecordChunk>& chunks, std::mt19937_64& random);

}  // namespace proflaunch::fuzz
