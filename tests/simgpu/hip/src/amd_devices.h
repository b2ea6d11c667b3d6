// The machine's AMD devices as the simulated HIP runtime shows them: which
// of them a process sees (ROCR_VISIBLE_DEVICES, then HIP_VISIBLE_DEVICES or
// CUDA_VISIBLE_DEVICES) and the unique id each carries. The engine publishes
// their state to the AMD devices' own state files (simgpu_device_state.h),
// which the simulated ROCm SMI reads.
#pragma once

#include <cstdint>
#include <string>

namespace simhip {

// Makes the engine this HIP runtime's (device_telemetry.h): AMD state files
// and the visibility below. Before cuInit.
void install_amd_personality() noexcept;

// The physical device behind the process's device `ordinal` (-1 if none).
int physical_device(int ordinal) noexcept;

// ROCr's UUID text of physical device `physical`: "GPU-" and the 16 hex
// digits of its unique id.
std::string amd_uuid_text(int physical);

}  // namespace simhip
