#include "preload/stacks/python_line_table.h"

namespace proflaunch::stacks {
namespace {

// 3.9 co_lnotab (Objects/lnotab_notes.txt of 3.9): pairs of an unsigned
// byte-offset increment and a signed line increment; the line of an offset
// is the first line plus the line increments of every pair whose start is at
// or before it.
int32_t lnotab_line(const uint8_t* table, size_t bytes, int32_t first_line, int64_t byte_offset) {
  int32_t line = first_line;
  int64_t address = 0;
  for (size_t i = 0; i + 1 < bytes; i += 2) {
    address += table[i];
    if (address > byte_offset) break;
    line += static_cast<int8_t>(table[i + 1]);
  }
  return line;
}

// 3.10 co_linetable (PEP 626): pairs of an unsigned byte length and a signed
// line delta; -128 means the range has no line (and leaves the running line
// alone). Empty ranges only move the line.
int32_t pep626_line(const uint8_t* table, size_t bytes, int32_t first_line, int64_t byte_offset) {
  int32_t line = first_line;
  int64_t end = 0;
  for (size_t i = 0; i + 1 < bytes; i += 2) {
    const int64_t start = end;
    end += table[i];
    const auto delta = static_cast<int8_t>(table[i + 1]);
    const bool has_line = delta != -128;
    if (has_line) line += delta;
    if (start <= byte_offset && byte_offset < end) return has_line ? line : -1;
  }
  return -1;
}

// 3.11+ location table (Objects/locations.md): entries of a first byte
// 1ccccnnn (code c, n+1 code units) followed by code-specific bytes; line
// deltas are 6-bit-chunk varints.
class LocationReader {
 public:
  LocationReader(const uint8_t* p, const uint8_t* end) : p_(p), end_(end) {}
  bool done() const { return p_ >= end_; }
  uint8_t byte() { return p_ < end_ ? *p_++ : 0; }
  uint32_t varint() {
    uint32_t read = byte();
    uint32_t value = read & 63;
    uint32_t shift = 0;
    while ((read & 64) != 0 && shift < 30) {
      read = byte();
      shift += 6;
      value |= (read & 63) << shift;
    }
    return value;
  }
  int32_t signed_varint() {
    const uint32_t value = varint();
    return (value & 1) != 0 ? -static_cast<int32_t>(value >> 1) : static_cast<int32_t>(value >> 1);
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

int32_t location_table_line(const uint8_t* table, size_t bytes, int32_t first_line, int64_t unit) {
  LocationReader reader(table, table + bytes);
  int32_t line = first_line;
  int64_t start = 0;
  while (!reader.done()) {
    const uint8_t first = reader.byte();
    if ((first & 0x80) == 0) return -1;  // not at an entry start: corrupt
    const unsigned kind = first >> 3 & 15;
    const int64_t units = (first & 7) + 1;
    int32_t delta = 0;
    switch (kind) {
      case 15: break;  // no location
      case 14:         // long form: line delta, end line delta, column, end column
        delta = reader.signed_varint();
        reader.varint();
        reader.varint();
        reader.varint();
        break;
      case 13: delta = reader.signed_varint(); break;  // no columns
      case 10: case 11: case 12:                        // one line: delta in the code, two columns
        delta = static_cast<int32_t>(kind) - 10;
        reader.byte();
        reader.byte();
        break;
      default: reader.byte(); break;  // short form: same line, one column byte
    }
    line += delta;
    if (unit < start + units) return kind == 15 ? -1 : line;
    start += units;
  }
  return -1;
}

}  // namespace

int32_t line_of_code_unit(LineTable format, const uint8_t* table, size_t table_bytes,
                          int32_t first_line, int64_t unit) {
  if (unit < 0) return first_line;  // before the first instruction, as the interpreter says
  const int64_t byte_offset = unit * static_cast<int64_t>(kCodeUnitBytes);
  switch (format) {
    case LineTable::kLnotab: return lnotab_line(table, table_bytes, first_line, byte_offset);
    case LineTable::kPep626: return pep626_line(table, table_bytes, first_line, byte_offset);
    case LineTable::kLocations: return location_table_line(table, table_bytes, first_line, unit);
  }
  return -1;
}

}  // namespace proflaunch::stacks
