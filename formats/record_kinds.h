// What a reader knows about each record kind of format v1: its name and the
// size of its fixed part. The reader uses the size to tell a corrupt (short)
// record from a newer, longer one; tools use the names in their output.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "formats/records.h"

namespace proflaunch::format {

// sizeof the record struct for kinds this reader knows; nullopt for unknown
// kinds (which readers skip by RecordHeader::bytes).
std::optional<size_t> fixed_record_bytes(uint16_t kind);

// "KernelLaunch", "StringDef", ...; nullopt for unknown kinds.
std::optional<std::string_view> record_kind_name(uint16_t kind);

// The size of the first version of a known kind's fixed part: a record this
// long is whole, and RecordView::as<T>() reads the fields added since as 0.
// Equal to fixed_record_bytes for kinds that never grew.
std::optional<size_t> minimum_record_bytes(uint16_t kind);

// minimum_record_bytes as a table by kind, 0 for unknown kinds: the reader
// asks for every record it reads, and this is one load it can inline.
inline constexpr std::array<uint16_t, 256> kMinimumRecordBytes = [] {
  std::array<uint16_t, 256> table{};
#define PROFLAUNCH_RECORD_KIND_MINIMUM(name, number, chunk, first_bytes, span) \
  table[number] = static_cast<uint16_t>((first_bytes) != 0 ? (first_bytes) : sizeof(name##Record));
  PROFLAUNCH_RECORD_KINDS(PROFLAUNCH_RECORD_KIND_MINIMUM)
#undef PROFLAUNCH_RECORD_KIND_MINIMUM
  return table;
}();

// True for kinds that belong in Definitions chunks.
bool is_definition_kind(uint16_t kind);

// Every kind this reader knows, in the list's order (for tables and tests).
inline constexpr RecordKind kKnownRecordKinds[] = {
#define PROFLAUNCH_RECORD_KIND_KNOWN(name, number, chunk, first_bytes, span) RecordKind::k##name,
    PROFLAUNCH_RECORD_KINDS(PROFLAUNCH_RECORD_KIND_KNOWN)
#undef PROFLAUNCH_RECORD_KIND_KNOWN
};

}  // namespace proflaunch::format
