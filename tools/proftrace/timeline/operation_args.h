// Args shared by the API and GPU slices of copies.
#pragma once

#include <string>

#include "formats/records.h"
#include "tools/proftrace/timeline/timeline_events.h"

namespace proflaunch::tools::timeline {

// The devices at each end of a copy (-1: host memory, omitted).
inline void add_copy_devices(Args& args, const format::MemoryCopyRecord& copy) {
  if (copy.src_device >= 0) args.add_int("src_device", copy.src_device);
  if (copy.dst_device >= 0) args.add_int("dst_device", copy.dst_device);
}

// " 1 to 0" for a peer copy whose devices are known, else "".
inline std::string peer_devices_text(const format::MemoryCopyRecord& copy) {
  if (copy.direction != static_cast<uint8_t>(format::CopyDirection::kPeer) || copy.src_device < 0 ||
      copy.dst_device < 0)
    return {};
  return " " + std::to_string(copy.src_device) + " to " + std::to_string(copy.dst_device);
}

}  // namespace proflaunch::tools::timeline
