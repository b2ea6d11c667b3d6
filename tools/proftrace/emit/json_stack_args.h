// The "stack" arg of an API slice: the merged call stack as text, root first
// and the API called LAST, one frame per line (stacks/stack_formatter.h).
// Cached per (section, stacks, API) as a quoted JSON string.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "tools/proftrace/timeline/timeline_events.h"
#include "tools/proftrace/stacks/stack_formatter.h"

namespace proflaunch::tools::emit {

class StackArgs {
 public:
  explicit StackArgs(StackFormatter& formatter) : formatter_(formatter) {}

  // Empty when the section defines neither stack.
  const std::string& json(const SectionModel& section, uint16_t api, timeline::CallStackRef stack);

 private:
  StackFormatter& formatter_;
  std::map<std::tuple<uint64_t, uint32_t, uint32_t, uint16_t>, std::string> cache_;
};

}  // namespace proflaunch::tools::emit
