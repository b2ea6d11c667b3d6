// Pairs each CallStack record with the API record it belongs to: the record
// right before it among the records of the same thread (formats/README.md,
// "Call stacks"). The two may sit in different chunks, with other threads'
// records between them, so each thread's last API record is held back until
// the thread's next record shows whether a stack follows. Memory: one held
// record per thread. Sections without stack definitions are not held at all.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>

#include "formats/reader.h"
#include "formats/records.h"
#include "tools/proftrace/interpret/events.h"

namespace proflaunch::tools::interpret {

class CallStackPairing {
 public:
  // Receives every record the pairing took, once, with its stack or none.
  // `ordinal`: what offer() was given with the record.
  using Release = std::function<void(const Section& section, const format::RecordView& record,
                                     Stacks stack, uint64_t ordinal)>;
  explicit CallStackPairing(Release release) : release_(std::move(release)) {}

  // True when the pairing took `record` (it will be released later, or it was
  // a CallStack); false when the caller should handle it now.
  bool offer(const Section& section, const format::RecordView& record, uint64_t ordinal = 0);

  // End of an input: releases every held record without a stack.
  void flush();

  uint64_t unpaired_stacks() const { return unpaired_stacks_; }

 private:
  static constexpr uint16_t kMaxHeldBytes = 256;
  struct Held {
    const Section* section = nullptr;
    format::RecordView view{};
    uint64_t ordinal = 0;
    alignas(8) uint8_t data[kMaxHeldBytes];
  };

  void release(Held& held, Stacks stack);

  Release release_;
  std::unordered_map<uint64_t, Held> held_;  // key: section id and tid
  uint64_t unpaired_stacks_ = 0;
};

}  // namespace proflaunch::tools::interpret
