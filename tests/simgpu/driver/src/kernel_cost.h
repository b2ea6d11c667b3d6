// The kernel cost model (formula and knobs: tests/simgpu/include/simgpu.h).
#pragma once

#include <cstdint>
#include <string>

namespace simgpu {

struct KernelCost {
  int64_t fixed_ns = 5'000;
  int64_t per_wave_ns = 1'000;
};

// Parses a SIMGPU_KERNEL_COSTS value into the cost table (entries already set
// through simgpuSetKernelCost win). False with a message on a malformed value.
bool load_kernel_costs(const std::string& spec, std::string& error);

// The cost of `kernel_name` now (its own entry, else the default).
KernelCost kernel_cost(const std::string& kernel_name);

int64_t kernel_duration_ns(const KernelCost& cost, uint64_t total_blocks, int sm_count);

// Parses "250us", "2ms", "1.5s", "800ns" or "800" (ns). False on anything else.
bool parse_duration_ns(const std::string& text, int64_t& duration_ns);

}  // namespace simgpu
