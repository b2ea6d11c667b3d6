// DeviceInfo for every device a recorded call touches, written once per
// device (name, multiprocessor count, memory, UUID, and the per-SM and
// per-block limits an occupancy estimate needs) from the driver.
#pragma once

#include <cstdint>

namespace proflaunch::cuda {

// Cold after the first call per device: a bit test.
void ensure_device_defined(int device) noexcept;

// The devices defined so far, bit d for device d (< 64): devices the
// program has used. Read off the hook path (PM sampling's writer task).
uint64_t defined_devices() noexcept;

}  // namespace proflaunch::cuda
