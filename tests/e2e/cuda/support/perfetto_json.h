// The Perfetto JSON that `proftrace convert` writes, loaded for assertions:
// the events, and the process/thread names its metadata gives.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/unit/tools/json_value.h"

namespace proflaunch::e2e {

using testing::JsonValue;

struct PerfettoJson {
  JsonValue document;
  std::vector<const JsonValue*> events;  // traceEvents, metadata included
  std::map<uint32_t, std::string> process_names;
  std::map<std::pair<uint32_t, uint32_t>, std::string> thread_names;  // (pid, tid)

  // X slices, optionally only those whose category starts with `prefix`.
  std::vector<const JsonValue*> slices(const std::string& category_prefix = "") const;
};

// Reads and parses `path`; `error` says why it could not.
bool load_perfetto_json(const std::string& path, PerfettoJson* json, std::string* error);

}  // namespace proflaunch::e2e
