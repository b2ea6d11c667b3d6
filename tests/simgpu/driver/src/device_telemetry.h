// Publishes each simulated device's state (memory held by this process, busy
// time, copied bytes, XID errors) to the machine-wide device state file of
// simgpu_device_state.h, as a kernel driver's state is visible to every
// process: the simulated NVML reads it from any process.
#pragma once

#include <cstdint>

namespace simgpu {

struct Device;
struct StreamOperation;

// Maps the state file of `device` (its physical index) and claims this
// process's slot. Without a file (directory not writable) publishing is off.
void telemetry_open(Device& device);
// After the device's used bytes changed.
void telemetry_memory(Device& device);
// An operation starts on a stream of `device`, to end at end_ns.
void telemetry_work(Device& device, const StreamOperation& op, int64_t start_ns, int64_t end_ns);
// A sticky fault on `device`: an XID error.
void telemetry_xid(Device& device, uint64_t code);

// Who this engine is to the machine. The simulated CUDA driver by default:
// state files "gpu<N>" (what the simulated NVML reads) and the devices
// CUDA_VISIBLE_DEVICES leaves. The simulated HIP runtime, which embeds its own
// copy of this engine, sets its own before cuInit: AMD devices are other
// devices of the machine, with their own state files (what the simulated
// ROCm SMI reads) and HIP's visibility variables.
struct EnginePersonality {
  const char* state_file_prefix = "gpu";
  // Fills `physical` with the visible devices in the program's order;
  // null: CUDA_VISIBLE_DEVICES (visible_devices below).
  void (*visible_devices)(int device_count, int* physical, int* count) = nullptr;
};
EnginePersonality& engine_personality();

// The physical devices CUDA_VISIBLE_DEVICES leaves visible, in the order it
// names them (as the real driver: integers; the list ends at the first entry
// that is not a valid index). Unset: every device.
bool visible_devices(int device_count, int* physical, int* count, const char* text);

}  // namespace simgpu
