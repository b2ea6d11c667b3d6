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

namespace proflaunch::tools::timeline {

struct SectionContext;

struct CallStackRef {
  uint32_t native = 0;
  uint32_t python = 0;
  bool empty() const { return native == 0 && python == 0; }
};

class CallStackPairing {
 public:
  // Receives every record the pairing took, once, with its stack or none.
  using Release = std::function<void(SectionContext& section, const format::RecordView& record,
                                     CallStackRef stack)>;
  explicit CallStackPairing(Release release) : release_(std::move(release)) {}

  // True when the pairing took `record` (it will be released later, or it was
  // a CallStack); false when the caller should handle it now.
  bool offer(SectionContext& section, const format::RecordView& record);

  // End of an input: releases every held record without a stack.
  void flush();

  uint64_t unpaired_stacks() const { return unpaired_stacks_; }

 private:
  static constexpr uint16_t kMaxHeldBytes = 256;
  struct Held {
    SectionContext* section = nullptr;
    format::RecordView view{};
    alignas(8) uint8_t data[kMaxHeldBytes];
  };

  void release(Held& held, CallStackRef stack);

  Release release_;
  std::unordered_map<uint64_t, Held> held_;  // key: section id and tid
  uint64_t unpaired_stacks_ = 0;
};

}  // namespace proflaunch::tools::timeline
