// Kernel attributes and occupancy: hipFuncGetAttributes, hipFuncGetAttribute,
// hipOccupancyMaxActiveBlocksPerMultiprocessor (and its module and flags
// forms). Every answer comes from the kernel's code object metadata
// (kernel_metadata.h) and the device's target (SIMGPU_HIP_ARCH).
#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "hip_state.h"
#include "kernel_metadata.h"

namespace simhip {
namespace {

std::mutex g_mutex;
std::unordered_map<CUfunction, KernelResources>& resources() {
  static auto* map = new std::unordered_map<CUfunction, KernelResources>;
  return *map;
}

constexpr uint32_t kLdsBytesPerCu = 64 * 1024;  // hipDeviceAttributeMaxSharedMemoryPerMultiprocessor

// AMD's occupancy rules for the device's target: per compute unit 4 SIMDs;
// a SIMD holds at most `max_waves` waves, and as many as its vector register
// file (`vgprs` per lane, allocated per wave in blocks of `vgpr_granule`) and
// its 800 scalar registers (blocks of 16) allow; a workgroup's waves stay on
// one CU and share its 64 KiB of LDS (blocks of 512 bytes). gfx90a and
// gfx94x have one 512-register file for VGPRs and AGPRs (a wave takes its
// VGPRs rounded to 4, then its AGPRs); earlier gfx9 parts have 256 VGPRs
// (and gfx908 a separate AGPR file). Sources: docs/amd.md.
struct ArchRules {
  uint32_t max_waves;
  uint32_t vgprs;
  uint32_t vgpr_granule;
  bool unified_agprs;
};

ArchRules rules_for(const std::string& target) {
  const std::string processor = target.substr(0, target.find(':'));
  if (processor == "gfx90a" || processor.rfind("gfx94", 0) == 0) return {8, 512, 8, true};
  return {10, 256, 4, false};  // gfx900-gfx908 (GCN5, CDNA1)
}

uint32_t round_up(uint64_t value, uint32_t unit) { return uint32_t((value + unit - 1) / unit * unit); }

// Workgroups of `block_threads` one CU holds at once.
int active_blocks(const KernelResources& k, int block_threads, size_t dynamic_lds_bytes) {
  if (block_threads > int(k.max_flat_workgroup_size)) return 0;
  const ArchRules rules = rules_for(machine().arch);
  constexpr uint32_t kSimdsPerCu = 4, kSgprsPerSimd = 800;
  const uint32_t wave_size = k.wavefront_size == 0 ? 64 : k.wavefront_size;
  const uint32_t waves_per_block = (uint32_t(block_threads) + wave_size - 1) / wave_size;
  uint32_t waves_per_simd = rules.max_waves;
  const uint32_t vgprs = rules.unified_agprs ? round_up(k.vgpr_count, 4) + k.agpr_count : k.vgpr_count;
  if (vgprs > 0) waves_per_simd = std::min(waves_per_simd, rules.vgprs / round_up(vgprs, rules.vgpr_granule));
  if (k.sgpr_count > 0) waves_per_simd = std::min(waves_per_simd, kSgprsPerSimd / round_up(k.sgpr_count, 16));
  uint32_t blocks = kSimdsPerCu * waves_per_simd / waves_per_block;
  const uint64_t lds = uint64_t{k.group_segment_bytes} + dynamic_lds_bytes;
  if (lds > kLdsBytesPerCu) return 0;
  if (lds > 0) blocks = std::min(blocks, kLdsBytesPerCu / round_up(lds, 512));
  return int(blocks);
}

bool find_resources(CUfunction function, KernelResources& out) {
  std::lock_guard lock(g_mutex);
  auto it = resources().find(function);
  if (it == resources().end()) return false;
  out = it->second;
  return true;
}

// The flags are ignored, as HIP 5.2's header says of them.
hipError_t occupancy(int* blocks, CUfunction function, int block_size, size_t dynamic_lds_bytes) {
  if (blocks == nullptr || block_size <= 0) return hipErrorInvalidValue;
  KernelResources k;
  if (!find_resources(function, k)) return hipErrorInvalidDeviceFunction;
  *blocks = active_blocks(k, block_size, dynamic_lds_bytes);
  return hipSuccess;
}

hipError_t registered(const void* host_function, CUfunction* function) {
  if (host_function == nullptr) return hipErrorInvalidDeviceFunction;
  return registered_function(host_function, function);
}

}  // namespace

void remember_kernel_resources(CUmodule module, const std::vector<KernelResources>& kernels) {
  for (const KernelResources& k : kernels) {
    CUfunction function = nullptr;
    if (cuModuleGetFunction(&function, module, k.name.c_str()) != CUDA_SUCCESS) continue;
    std::lock_guard lock(g_mutex);
    resources()[function] = k;
  }
}

}  // namespace simhip

using namespace simhip;

extern "C" {

hipError_t hipFuncGetAttributes(hipFuncAttributes* attr, const void* func) {
  return device_api([&] {
    if (attr == nullptr) return hipErrorInvalidValue;
    CUfunction function = nullptr;
    if (hipError_t r = registered(func, &function); r != hipSuccess) return r;
    KernelResources k;
    if (!find_resources(function, k)) return hipErrorInvalidDeviceFunction;
    std::memset(attr, 0, sizeof *attr);
    attr->numRegs = int(k.vgpr_count);
    attr->sharedSizeBytes = k.group_segment_bytes;
    attr->localSizeBytes = k.private_segment_bytes;
    attr->maxThreadsPerBlock = int(k.max_flat_workgroup_size);
    attr->maxDynamicSharedSizeBytes = int(kLdsBytesPerCu - std::min(k.group_segment_bytes, kLdsBytesPerCu));
    return hipSuccess;
  });
}

hipError_t hipFuncGetAttribute(int* value, hipFunction_attribute attrib, hipFunction_t hfunc) {
  return device_api([&] {
    if (value == nullptr) return hipErrorInvalidValue;
    KernelResources k;
    if (hfunc == nullptr || !find_resources(cu(hfunc), k)) return hipErrorInvalidResourceHandle;
    switch (attrib) {
      case HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = int(k.max_flat_workgroup_size); return hipSuccess;
      case HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = int(k.group_segment_bytes); return hipSuccess;
      case HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *value = int(k.private_segment_bytes); return hipSuccess;
      case HIP_FUNC_ATTRIBUTE_NUM_REGS: *value = int(k.vgpr_count); return hipSuccess;
      case HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        *value = int(kLdsBytesPerCu - std::min(k.group_segment_bytes, kLdsBytesPerCu));
        return hipSuccess;
      case HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
      case HIP_FUNC_ATTRIBUTE_PTX_VERSION:
      case HIP_FUNC_ATTRIBUTE_BINARY_VERSION:
      case HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA:
      case HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *value = 0; return hipSuccess;
      default: return hipErrorInvalidValue;
    }
  });
}

hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, const void* f, int blockSize,
                                                                 size_t dynSharedMemPerBlk, unsigned int) {
  return device_api([&] {
    if (numBlocks == nullptr) return hipErrorInvalidValue;
    CUfunction function = nullptr;
    if (hipError_t r = registered(f, &function); r != hipSuccess) return r;
    return occupancy(numBlocks, function, blockSize, dynSharedMemPerBlk);
  });
}

hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* f, int blockSize,
                                                        size_t dynSharedMemPerBlk) {
  return hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, f, blockSize, dynSharedMemPerBlk,
                                                               hipOccupancyDefault);
}

hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, hipFunction_t f, int blockSize,
                                                                       size_t dynSharedMemPerBlk, unsigned int) {
  return device_api([&] {
    if (f == nullptr) return hipErrorInvalidResourceHandle;
    return occupancy(numBlocks, cu(f), blockSize, dynSharedMemPerBlk);
  });
}

hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, hipFunction_t f, int blockSize,
                                                              size_t dynSharedMemPerBlk) {
  return hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, f, blockSize, dynSharedMemPerBlk,
                                                                     hipOccupancyDefault);
}

}  // extern "C"
