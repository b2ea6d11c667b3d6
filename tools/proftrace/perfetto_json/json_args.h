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

// The devices at each end of a copy (-1: host memory, omitted).
inline void write_copy_devices(JsonWriter& w, const format::MemoryCopyRecord& copy) {
  if (copy.src_device >= 0) write_number_arg(w, "src_device", copy.src_device);
  if (copy.dst_device >= 0) write_number_arg(w, "dst_device", copy.dst_device);
}

// " 1 to 0" for a peer copy whose devices are known, else "".
inline std::string peer_devices_text(const format::MemoryCopyRecord& copy) {
  if (copy.direction != static_cast<uint8_t>(format::CopyDirection::kPeer) || copy.src_device < 0 ||
      copy.dst_device < 0)
    return {};
  return " " + std::to_string(copy.src_device) + " to " + std::to_string(copy.dst_device);
}

}  // namespace proflaunch::tools::perfetto_json
