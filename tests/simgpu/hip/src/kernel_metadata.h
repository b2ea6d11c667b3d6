// A kernel's resource use as its AMDGPU code object states it: the
// NT_AMDGPU_METADATA note (owner "AMDGPU", a MessagePack map, code object V3
// and later; LLVM's AMDGPUUsage, "Code Object V3+ Metadata") has, per entry of
// "amdhsa.kernels", ".name", ".vgpr_count", ".agpr_count", ".sgpr_count",
// ".group_segment_fixed_size" (static LDS bytes), ".private_segment_fixed_size"
// (scratch bytes per work-item), ".wavefront_size" and
// ".max_flat_workgroup_size". What hipFuncGetAttributes and the occupancy
// API answer comes from here, as in the real runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace simhip {

struct KernelResources {
  std::string name;
  uint32_t vgpr_count = 0;
  uint32_t agpr_count = 0;
  uint32_t sgpr_count = 0;
  uint32_t group_segment_bytes = 0;
  uint32_t private_segment_bytes = 0;
  uint32_t wavefront_size = 64;
  uint32_t max_flat_workgroup_size = 1024;
};

// The kernels the code object's metadata note describes; empty when it has
// none (a code object V2 with YAML metadata, a malformed note).
std::vector<KernelResources> code_object_kernel_resources(const uint8_t* data, size_t bytes);

}  // namespace simhip
