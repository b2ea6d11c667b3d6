// Loaded modules, libraries and their kernels.
//
// A CUkernel (library kernel) and the CUfunction it yields are the same object:
// the real driver accepts a CUkernel cast to CUfunction in cuLaunchKernel, and
// the simulator has no per-context copies to tell apart.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cubin.h"
#include "cuda_api.h"

struct CUfunc_st {
  simgpu::KernelInfo info;
  CUmod_st* module = nullptr;
  int sm_arch = 0;
  std::mutex mutex;
  int settable_attributes[CU_FUNC_ATTRIBUTE_MAX] = {};  // values set by cuFuncSetAttribute
  CUfunc_cache cache_config = CU_FUNC_CACHE_PREFER_NONE;
};

struct CUmod_st {
  unsigned long long id = 0;
  CUctx_st* context = nullptr;  // nullptr for a library's module (context-independent)
  CUlib_st* library = nullptr;
  int device = 0;  // where its variables live
  std::vector<CUfunc_st*> functions;
  struct Variable {
    CUdeviceptr address = 0;
    size_t bytes = 0;
    bool managed = false;
  };
  std::map<std::string, Variable> variables;
  // SIMGPU_MODULE_LOAD_NS not yet spent: lazy loading (CUDA_MODULE_LOADING)
  // spends it when a kernel is first needed.
  std::atomic<int64_t> load_pending_ns{0};
};

struct CUlib_st {
  CUmod_st* module = nullptr;
};

namespace simgpu {

// Loads `image` (see image_loader.h). A module of `context` is unloaded with it;
// a library's module (context nullptr) is not bound to a context, and its
// variables live on the device that was current when it was loaded (device 0
// if none was).
CUresult load_module(const void* image, CUctx_st* context, CUmod_st*& module);
CUresult load_module_from_file(const char* path, CUctx_st* context, CUmod_st*& module);

// A module whose kernels are known by name only, for a front end that reads
// its own device code (the simulated HIP runtime's AMD code objects). The
// kernels take no declared parameters; their costs come from kernel_cost.h.
CUresult load_named_kernels(const std::vector<std::string>& names, CUctx_st* context, CUmod_st*& module);

// cuLaunchKernel (a NULL stream is the legacy one) whose start event refers
// to the moment the kernel starts and whose stop event to its end, for a
// front end whose launches bind events to the dispatch (HIP's
// hipExtLaunchKernel); either event may be null (launch_api.cpp).
CUresult launch_kernel_with_events(CUfunction f, const unsigned grid[3], const unsigned block[3],
                                   unsigned shared_bytes, CUstream stream, void** parameters, void** extra,
                                   CUevent start_event, CUevent stop_event);

// Waits for the device, frees the module's variables, forgets its functions.
void unload_module(CUmod_st* module);
void unload_modules_of_context(CUctx_st* context);

CUfunc_st* find_function(CUmod_st* module, const char* name);

// Spends the module's load time if lazy loading left it for now: a library's
// kernel when first launched, a module's kernel when cuModuleGetFunction
// first finds it (the CUDA programming guide, "Lazy Loading").
void pay_pending_load(CUmod_st* module);

// A launchable function handle (CUfunction or CUkernel), or nullptr.
CUfunc_st* as_function(const void* handle);

// Default for CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES before it is set.
constexpr int kDefaultDynamicSharedBytes = 48 * 1024;

}  // namespace simgpu
