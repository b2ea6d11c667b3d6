// API names (ApiDef records), defined the first time a record names an API.
//
// The hook tables know about a thousand APIs (every CUDA driver and runtime
// entry point). Defining all of them in every process would cost each part
// file tens of kilobytes for names it never uses, so the writer defines an
// API when it drains the first record that carries its id (every record with
// an ApiSpan, and ApiCount records): the ApiDef reaches the file in the
// Definitions chunk written just before that record's Events chunk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "formats/records.h"

namespace proflaunch {

struct ApiName {
  std::string_view name;
  format::ApiDomain domain = format::ApiDomain::kOther;
  format::Vendor vendor = format::Vendor::kUnknown;
};

// Answers what `api` is called; false for an id nobody uses. Set once by
// the hook sets of the injected library, before anything records.
using ApiNamer = bool (*)(uint16_t api, ApiName* name);
void set_api_namer(ApiNamer namer) noexcept;

// Writer: defines `api` unless it already is (in this process: a fork
// child's section re-writes the whole catalog, ApiDefs included).
void define_api_on_first_use(uint16_t api) noexcept;

// The same for the API a whole record (header included) names in its
// ApiSpan, if it has one. Inline: the writer asks for every drained record.
inline void define_api_of_record(const void* record, uint16_t bytes) noexcept {
  uint16_t kind;
  std::memcpy(&kind, record, sizeof kind);
  if (!format::has_api_span(kind) || bytes < format::kApiSpanOffset + sizeof(format::ApiSpan)) return;
  uint16_t api;
  std::memcpy(&api, static_cast<const uint8_t*>(record) + format::kApiSpanOffset + offsetof(format::ApiSpan, api),
              sizeof api);
  if (api != 0) define_api_on_first_use(api);
}

}  // namespace proflaunch
