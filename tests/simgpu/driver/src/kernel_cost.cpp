#include "kernel_cost.h"

#include <simgpu.h>

#include <cstdlib>
#include <mutex>
#include <set>
#include <unordered_map>

namespace simgpu {
namespace {

constexpr const char* kDefaultCostName = "*";

struct CostTable {
  std::mutex mutex;
  std::unordered_map<std::string, KernelCost> by_name;
  std::set<std::string> set_by_program;  // environment entries never override these
  KernelCost default_cost;
};

// Never destroyed: worker threads and late callers may use it during exit.
CostTable& table() {
  static CostTable* instance = new CostTable;
  return *instance;
}

void set_cost(CostTable& costs, const std::string& name, KernelCost cost) {
  if (name == kDefaultCostName) {
    costs.default_cost = cost;
  } else {
    costs.by_name[name] = cost;
  }
}

}  // namespace

bool parse_duration_ns(const std::string& text, int64_t& duration_ns) {
  if (text.empty()) return false;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  std::string unit(end);
  double scale = 0;
  if (unit.empty() || unit == "ns") {
    scale = 1;
  } else if (unit == "us") {
    scale = 1e3;
  } else if (unit == "ms") {
    scale = 1e6;
  } else if (unit == "s") {
    scale = 1e9;
  } else {
    return false;
  }
  if (end == text.c_str() || !(value >= 0) || value * scale > 1e15) return false;
  duration_ns = int64_t(value * scale + 0.5);
  return true;
}

bool load_kernel_costs(const std::string& spec, std::string& error) {
  CostTable& costs = table();
  std::lock_guard lock(costs.mutex);
  size_t position = 0;
  while (position < spec.size()) {
    size_t comma = spec.find(',', position);
    std::string entry = spec.substr(position, comma == std::string::npos ? std::string::npos : comma - position);
    position = comma == std::string::npos ? spec.size() : comma + 1;
    if (entry.empty()) continue;
    size_t equals = entry.rfind('=');
    size_t colon = entry.find(':', equals == std::string::npos ? 0 : equals);
    KernelCost cost;
    cost.per_wave_ns = 0;
    bool ok = equals != std::string::npos && equals > 0;
    if (ok) {
      std::string fixed = entry.substr(equals + 1, colon == std::string::npos ? std::string::npos : colon - equals - 1);
      ok = parse_duration_ns(fixed, cost.fixed_ns) &&
           (colon == std::string::npos || parse_duration_ns(entry.substr(colon + 1), cost.per_wave_ns));
    }
    if (!ok) {
      error = "SIMGPU_KERNEL_COSTS entry '" + entry + "' is not name=fixed[:per_wave] (e.g. k=10us:1us)";
      return false;
    }
    std::string name = entry.substr(0, equals);
    if (!costs.set_by_program.count(name)) set_cost(costs, name, cost);
  }
  return true;
}

KernelCost kernel_cost(const std::string& kernel_name) {
  CostTable& costs = table();
  std::lock_guard lock(costs.mutex);
  auto it = costs.by_name.find(kernel_name);
  return it != costs.by_name.end() ? it->second : costs.default_cost;
}

int64_t kernel_duration_ns(const KernelCost& cost, uint64_t total_blocks, int sm_count) {
  uint64_t waves = (total_blocks + uint64_t(sm_count) - 1) / uint64_t(sm_count);
  return cost.fixed_ns + cost.per_wave_ns * int64_t(waves);
}

}  // namespace simgpu

extern "C" int simgpuSetKernelCost(const char* kernel_name, unsigned long long fixed_ns,
                                   unsigned long long per_wave_ns) {
  if (!kernel_name || !*kernel_name) return -1;
  try {
    simgpu::CostTable& costs = simgpu::table();
    std::lock_guard lock(costs.mutex);
    costs.set_by_program.insert(kernel_name);
    simgpu::set_cost(costs, kernel_name, {int64_t(fixed_ns), int64_t(per_wave_ns)});
    return 0;
  } catch (...) {
    return -1;
  }
}
