// Interned text of the timeline: kernel, API and stream names, categories
// and other strings that recur. Each distinct text gets one iid (from 1) and
// stable storage for the whole conversion, so emitters cache their own
// encoding per iid (quoted JSON, protobuf interning).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

#include "tools/proftrace/timeline/timeline_events.h"

namespace proflaunch::tools::timeline {

class StringTable {
 public:
  Str intern(std::string_view text) {
    auto found = ids_.find(text);
    if (found != ids_.end()) return Str{found->first, found->second};
    storage_.emplace_back(text);
    const std::string_view stored = storage_.back();
    const uint32_t iid = static_cast<uint32_t>(storage_.size());
    ids_.emplace(stored, iid);
    return Str{stored, iid};
  }
  size_t size() const { return storage_.size(); }

 private:
  std::deque<std::string> storage_;
  std::unordered_map<std::string_view, uint32_t> ids_;
};

}  // namespace proflaunch::tools::timeline
