// The trace-event array being written: separators between events and a
// count of them, on top of JsonWriter.
#pragma once

#include <cstdint>

#include "tools/proftrace/json_writer.h"

namespace proflaunch::tools::perfetto_json {

class EventStream {
 public:
  explicit EventStream(JsonWriter& writer) : writer_(writer) {}

  void begin() { writer_.raw("{\"traceEvents\":[\n"); }
  // Call before writing each event object.
  JsonWriter& next_event() {
    if (events_ > 0) writer_.raw(",\n");
    ++events_;
    return writer_;
  }
  void end() { writer_.raw("\n]}\n"); }

  JsonWriter& writer() { return writer_; }
  uint64_t events() const { return events_; }

 private:
  JsonWriter& writer_;
  uint64_t events_ = 0;
};

}  // namespace proflaunch::tools::perfetto_json
