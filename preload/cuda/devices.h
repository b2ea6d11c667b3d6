// DeviceInfo for every device a recorded call touches, written once per
// device (name, multiprocessor count, memory, UUID, and the per-SM and
// per-block limits an occupancy estimate needs) from the driver.
#pragma once

namespace proflaunch::cuda {

// Cold after the first call per device: a bit test.
void ensure_device_defined(int device) noexcept;

}  // namespace proflaunch::cuda
