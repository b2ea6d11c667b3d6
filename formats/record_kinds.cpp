#include "formats/record_kinds.h"

#include <cstddef>

namespace proflaunch::format {
namespace {

struct KindInfo {
  std::string_view name;
  uint16_t fixed_bytes = 0;    // 0: not a known kind
  bool definition = false;
};

// Kinds are below 256 (record delta coding relies on it too).
#define PROFLAUNCH_RECORD_KIND_BELOW_256(name, number, chunk, first_bytes, span) \
  static_assert((number) > 0 && (number) < 256, #name " must be in 1..255");
PROFLAUNCH_RECORD_KINDS(PROFLAUNCH_RECORD_KIND_BELOW_256)
#undef PROFLAUNCH_RECORD_KIND_BELOW_256

// A grown kind's first version is shorter than its struct.
#define PROFLAUNCH_RECORD_KIND_FIRST_SIZE(name, number, chunk, first_bytes, span) \
  static_assert((first_bytes) == 0 || (first_bytes) < sizeof(name##Record), #name);
PROFLAUNCH_RECORD_KINDS(PROFLAUNCH_RECORD_KIND_FIRST_SIZE)
#undef PROFLAUNCH_RECORD_KIND_FIRST_SIZE

// Kinds that declare an ApiSpan keep it where every tool looks for it.
template <typename Record, bool kHasSpan>
constexpr bool span_where_expected() {
  if constexpr (kHasSpan) return offsetof(Record, span) == kApiSpanOffset;
  else return true;
}
#define PROFLAUNCH_RECORD_KIND_SPAN_AT(name, number, chunk, first_bytes, has_span) \
  static_assert(span_where_expected<name##Record, has_span>(), #name " keeps its ApiSpan at kApiSpanOffset");
PROFLAUNCH_RECORD_KINDS(PROFLAUNCH_RECORD_KIND_SPAN_AT)
#undef PROFLAUNCH_RECORD_KIND_SPAN_AT

struct KindTable {
  KindInfo kinds[256];
};

// Built at compile time: the reader asks for every record it reads.
constexpr KindTable make_kind_table() {
  KindTable table{};
#define PROFLAUNCH_RECORD_KIND_ROW(name, number, chunk, first_bytes, span)                                      \
  table.kinds[number] = KindInfo{#name, static_cast<uint16_t>(sizeof(name##Record)), \
                                 ChunkKind::chunk == ChunkKind::kDefinitions};
  PROFLAUNCH_RECORD_KINDS(PROFLAUNCH_RECORD_KIND_ROW)
#undef PROFLAUNCH_RECORD_KIND_ROW
  return table;
}
constexpr KindTable kKindTable = make_kind_table();

const KindInfo* known(uint16_t kind) {
  if (kind >= 256 || kKindTable.kinds[kind].fixed_bytes == 0) return nullptr;
  return &kKindTable.kinds[kind];
}

}  // namespace

std::optional<size_t> fixed_record_bytes(uint16_t kind) {
  if (const KindInfo* info = known(kind)) return info->fixed_bytes;
  return std::nullopt;
}

std::optional<size_t> minimum_record_bytes(uint16_t kind) {
  if (known(kind) == nullptr) return std::nullopt;
  return kMinimumRecordBytes[kind];
}

std::optional<std::string_view> record_kind_name(uint16_t kind) {
  if (const KindInfo* info = known(kind)) return info->name;
  return std::nullopt;
}

bool is_definition_kind(uint16_t kind) {
  const KindInfo* info = known(kind);
  return info != nullptr && info->definition;
}

}  // namespace proflaunch::format
