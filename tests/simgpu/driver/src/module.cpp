#include "module.h"

#include <cstring>
#include <fstream>
#include <iterator>

#include "clock.h"
#include "context.h"
#include "driver_state.h"
#include "image_loader.h"
#include "memory.h"

namespace simgpu {
namespace {

ImageTarget device_target() {
  const DriverConfig& config = state().config;
  return ImageTarget{config.cc_major * 10 + config.cc_minor, config.ptx_jit_enabled};
}

CUresult instantiate(const ModuleImage& image, CUctx_st* context, CUmod_st*& out) {
  auto module = std::make_unique<CUmod_st>();
  // Loading takes the driver time (the code goes to the device): now, or
  // when a kernel is first needed (pay_pending_load).
  module->load_pending_ns = state().config.module_load_ns;
  if (!state().config.lazy_loading) pay_pending_load(module.get());
  module->id = state().new_id();
  module->context = context;
  CUctx_st* home = context ? context : current_context();
  module->device = home && check_context(home) == CUDA_SUCCESS ? home->device->ordinal : 0;
  Device* device = find_device(module->device);
  for (const VariableInfo& variable : image.variables) {
    MemoryRange range;
    range.bytes = std::max<uint64_t>(variable.bytes, 1);
    // __managed__ variables are managed memory (not charged to the device, like
    // cuMemAllocManaged); the others are device memory of the module.
    range.kind = variable.managed ? MemoryKind::kManaged : MemoryKind::kModuleGlobal;
    range.device = module->device;
    range.context = context;
    CUdeviceptr address = 0;
    if (CUresult result = allocate_registered(range, variable.managed ? nullptr : device, address);
        result != CUDA_SUCCESS) {
      unload_module(module.release());
      return result;
    }
    if (!variable.initial_value.empty())
      std::memcpy(reinterpret_cast<void*>(address), variable.initial_value.data(),
                  std::min<size_t>(variable.initial_value.size(), variable.bytes));
    module->variables[variable.name] = {address, size_t(variable.bytes), variable.managed};
  }
  for (const KernelInfo& kernel : image.kernels) {
    auto* function = new CUfunc_st;
    function->info = kernel;
    function->module = module.get();
    function->sm_arch = image.sm_arch;
    function->settable_attributes[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES] =
        std::max(0, kDefaultDynamicSharedBytes - int(kernel.static_shared_bytes));
    function->settable_attributes[CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT] = -1;
    module->functions.push_back(function);
    state().functions.insert(function);
  }
  out = module.release();
  state().modules.insert(out);
  return CUDA_SUCCESS;
}

}  // namespace

CUresult load_module(const void* image, CUctx_st* context, CUmod_st*& module) {
  ModuleImage parsed;
  if (CUresult result = load_module_image(image, device_target(), parsed); result != CUDA_SUCCESS) return result;
  return instantiate(parsed, context, module);
}

CUresult load_named_kernels(const std::vector<std::string>& names, CUctx_st* context, CUmod_st*& module) {
  ModuleImage image;
  image.sm_arch = state().config.cc_major * 10 + state().config.cc_minor;
  for (const std::string& name : names) {
    KernelInfo kernel;
    kernel.name = name;
    image.kernels.push_back(std::move(kernel));
  }
  return instantiate(image, context, module);
}

CUresult load_module_from_file(const char* path, CUctx_st* context, CUmod_st*& module) {
  if (!path) return CUDA_ERROR_INVALID_VALUE;
  std::ifstream file(path, std::ios::binary);
  if (!file) return CUDA_ERROR_FILE_NOT_FOUND;
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  ModuleImage parsed;
  if (CUresult result = load_module_image_bytes(bytes.data(), bytes.size(), device_target(), parsed);
      result != CUDA_SUCCESS) {
    return result;
  }
  return instantiate(parsed, context, module);
}

void unload_module(CUmod_st* module) {
  state().modules.erase(module);
  for (CUfunc_st* function : module->functions) {
    state().functions.erase(function);
    delete function;
  }
  if (!module->variables.empty()) synchronize_device(find_device(module->device));
  for (auto& [name, variable] : module->variables) {
    auto erased = state().memory.erase(variable.address, [](const MemoryRange& range) {
      return range.kind == MemoryKind::kModuleGlobal || range.kind == MemoryKind::kManaged;
    });
    if (!erased) continue;
    unmap_backing_memory(reinterpret_cast<void*>(erased->base), erased->bytes);
    if (Device* device = erased->kind == MemoryKind::kModuleGlobal ? find_device(erased->device) : nullptr) {
      device->release_bytes(round_up(erased->bytes, kAllocationGranularityBytes));
    }
  }
  delete module;
}

void unload_modules_of_context(CUctx_st* context) {
  std::vector<CUmod_st*> owned;
  state().modules.for_each([&](CUmod_st* module) {
    if (module->context == context && !module->library) owned.push_back(module);
  });
  for (CUmod_st* module : owned) unload_module(module);
}

CUfunc_st* find_function(CUmod_st* module, const char* name) {
  for (CUfunc_st* function : module->functions) {
    if (function->info.name == name) return function;
  }
  return nullptr;
}

CUfunc_st* as_function(const void* handle) {
  if (!handle || !state().functions.contains(handle)) return nullptr;
  return static_cast<CUfunc_st*>(const_cast<void*>(handle));
}

void pay_pending_load(CUmod_st* module) {
  const int64_t load_ns = module->load_pending_ns.exchange(0);
  if (load_ns > 0) sleep_until_monotonic_ns(monotonic_now_ns() + load_ns);
}

}  // namespace simgpu
