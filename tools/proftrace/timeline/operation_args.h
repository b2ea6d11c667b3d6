// Args shared by the API and GPU slices of launches, copies and memsets.
#pragma once

#include <string>

#include "formats/records.h"
#include "tools/proftrace/timeline/timeline_events.h"

namespace proflaunch::tools::timeline {

// A device as its runtime numbers it: an AMD device's HIP ordinal, not
// proflaunch's kAmdDeviceBase + ordinal. Kineto's "device" (the PyTorch
// profiler's, on CUDA and ROCm alike), which the TensorBoard plugin uses as
// an index into deviceProperties; the GPU process's name says the vendor.
inline void add_device(Args& args, const char* key, int32_t device) {
  args.add_int(key, format::device_ordinal(device));
}

// The devices at each end of a copy (-1: host memory, omitted).
inline void add_copy_devices(Args& args, const format::MemoryCopyRecord& copy) {
  if (copy.src_device >= 0) add_device(args, "src_device", copy.src_device);
  if (copy.dst_device >= 0) add_device(args, "dst_device", copy.dst_device);
}

// " 1 to 0" for a peer copy whose devices are known, else "".
inline std::string peer_devices_text(const format::MemoryCopyRecord& copy) {
  if (copy.direction != static_cast<uint8_t>(format::CopyDirection::kPeer) || copy.src_device < 0 ||
      copy.dst_device < 0)
    return {};
  return " " + std::to_string(copy.src_device) + " to " + std::to_string(copy.dst_device);
}

}  // namespace proflaunch::tools::timeline
