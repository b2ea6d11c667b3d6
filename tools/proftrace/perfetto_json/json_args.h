// Small helpers for writing `,"key":value` pairs inside an args object.
#pragma once

#include <string>

#include "formats/records.h"
#include "tools/proftrace/json_writer.h"

namespace proflaunch::tools::perfetto_json {

inline void write_string_arg(JsonWriter& w, const char* key, const std::string& value) {
  w.raw(",\"");
  w.raw(key);
  w.raw("\":");
  w.quoted(value);
}

// `json` is already a JSON value (a cached quoted string).
inline void write_json_arg(JsonWriter& w, const char* key, const std::string& json) {
  w.raw(",\"");
  w.raw(key);
  w.raw("\":");
  w.raw(json);
}

template <typename Number>
void write_number_arg(JsonWriter& w, const char* key, Number value) {
  w.raw(",\"");
  w.raw(key);
  w.raw("\":");
  w.number(value);
}

inline void write_dim3_arg(JsonWriter& w, const char* key, const format::Dim3& dim) {
  w.raw(",\"");
  w.raw(key);
  w.raw("\":\"(");
  w.number(dim.x);
  w.put(',');
  w.number(dim.y);
  w.put(',');
  w.number(dim.z);
  w.raw(")\"");
}

}  // namespace proflaunch::tools::perfetto_json
