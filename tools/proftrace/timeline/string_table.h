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
  // Text with static storage (a literal): remembered by its address too,
  // so that text interned for every event is not hashed every time.
  Str intern_static(std::string_view text) {
    const uint64_t hash = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(text.data())) * 0x9E3779B97F4A7C15ull;
    StaticEntry& entry = static_cache_[hash >> (64 - kStaticCacheBits)];
    if (entry.data == text.data() && entry.str.text.size() == text.size()) return entry.str;
    const Str str = intern(text);
    entry = StaticEntry{text.data(), str};
    return str;
  }
  size_t size() const { return storage_.size(); }

 private:
  struct StaticEntry {
    const char* data = nullptr;
    Str str;
  };
  static constexpr unsigned kStaticCacheBits = 6;
  std::deque<std::string> storage_;
  std::unordered_map<std::string_view, uint32_t> ids_;
  StaticEntry static_cache_[1u << kStaticCacheBits];
};

}  // namespace proflaunch::tools::timeline
