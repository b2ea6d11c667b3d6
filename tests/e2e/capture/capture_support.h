// What the capture, ring and ctl tests read from a trace of capture_steps
// (programs/): a step's host-to-device copy is 4096 * (step + 1) bytes.
#pragma once

#include <algorithm>
#include <vector>

#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {

// The steps whose copy is in the trace, in copy order sorted (a step
// recorded twice appears twice).
inline std::vector<int> step_copies(const CudaTrace& trace) {
  std::vector<int> steps;
  for (const ProcessImage& image : trace.images)
    for (const Operation* op : image.copies())
      if (op->bytes % 4096 == 0 && op->bytes >= 4096) steps.push_back(static_cast<int>(op->bytes / 4096) - 1);
  std::sort(steps.begin(), steps.end());
  return steps;
}

// The CaptureWindow records of one action, in file order.
inline std::vector<format::CaptureWindowRecord> windows(const CudaTrace& trace, format::CaptureWindowAction action) {
  std::vector<format::CaptureWindowRecord> out;
  for (const ProcessImage& image : trace.images)
    for (const auto& w : image.windows)
      if (w.action == static_cast<uint8_t>(action)) out.push_back(w);
  return out;
}

}  // namespace proflaunch::e2e
