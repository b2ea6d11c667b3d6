// cuModule* and cuLibrary*: loading real nvcc images and looking kernels up by
// their ELF symbol names.
#include "api_guard.h"
#include "context.h"
#include "driver_state.h"
#include "module.h"

using namespace simgpu;

namespace {

bool valid_module(CUmodule module) { return module && state().modules.contains(module); }
bool valid_library(CUlibrary library) { return library && state().libraries.contains(library); }

// JIT options that are output parameters get empty logs; the rest are accepted.
void answer_jit_options(unsigned count, const CUjit_option* options, void** values) {
  if (!options || !values) return;
  for (unsigned i = 0; i < count; ++i) {
    switch (options[i]) {
      case CU_JIT_INFO_LOG_BUFFER:
      case CU_JIT_ERROR_LOG_BUFFER:
        if (values[i]) static_cast<char*>(values[i])[0] = '\0';
        break;
      case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
      case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
        values[i] = nullptr;  // bytes of log written: none
        break;
      case CU_JIT_WALL_TIME:
        *reinterpret_cast<float*>(&values[i]) = 0.0f;
        break;
      default:
        break;
    }
  }
}

CUresult load_into_current_context(CUmodule* module, const void* image) {
  if (!module) return CUDA_ERROR_INVALID_VALUE;
  CUctx_st* context = nullptr;
  if (CUresult result = require_current_context(context); result != CUDA_SUCCESS) return result;
  return load_module(image, context, *module);
}

CUresult make_library(CUlibrary* library, CUmod_st* module) {
  auto* made = new CUlib_st;
  made->module = module;
  module->library = made;
  state().libraries.insert(made);
  *library = made;
  return CUDA_SUCCESS;
}

CUresult get_variable(CUdeviceptr* dptr, size_t* bytes, CUmodule module, const char* name, bool managed_only = false) {
  if (!name) return CUDA_ERROR_INVALID_VALUE;
  auto it = module->variables.find(name);
  if (it == module->variables.end() || (managed_only && !it->second.managed)) return CUDA_ERROR_NOT_FOUND;
  if (dptr) *dptr = it->second.address;
  if (bytes) *bytes = it->second.bytes;
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* image) {
  return api_call([&] { return load_into_current_context(module, image); });
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int numOptions, CUjit_option* options,
                                    void** optionValues) {
  return api_call([&] {
    CUresult result = load_into_current_context(module, image);
    if (result == CUDA_SUCCESS) answer_jit_options(numOptions, options, optionValues);
    return result;
  });
}

CUresult CUDAAPI cuModuleLoadFatBinary(CUmodule* module, const void* fatCubin) {
  return api_call([&] { return load_into_current_context(module, fatCubin); });
}

CUresult CUDAAPI cuModuleLoad(CUmodule* module, const char* fname) {
  return api_call([&] {
    if (!module) return CUDA_ERROR_INVALID_VALUE;
    CUctx_st* context = nullptr;
    if (CUresult result = require_current_context(context); result != CUDA_SUCCESS) return result;
    return load_module_from_file(fname, context, *module);
  });
}

CUresult CUDAAPI cuModuleUnload(CUmodule hmod) {
  return api_call([&] {
    if (!valid_module(hmod) || hmod->library) return CUDA_ERROR_INVALID_HANDLE;
    unload_module(hmod);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name) {
  return api_call([&] {
    if (!hfunc || !name) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_module(hmod)) return CUDA_ERROR_INVALID_HANDLE;
    CUfunc_st* function = find_function(hmod, name);
    if (!function) return CUDA_ERROR_NOT_FOUND;
    pay_pending_load(hmod);
    *hfunc = function;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuModuleGetFunctionCount(unsigned int* count, CUmodule mod) {
  return api_call([&] {
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_module(mod)) return CUDA_ERROR_INVALID_HANDLE;
    *count = unsigned(mod->functions.size());
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuModuleEnumerateFunctions(CUfunction* functions, unsigned int numFunctions, CUmodule mod) {
  return api_call([&] {
    if (!functions) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_module(mod)) return CUDA_ERROR_INVALID_HANDLE;
    for (size_t i = 0; i < mod->functions.size() && i < numFunctions; ++i) functions[i] = mod->functions[i];
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuModuleGetGlobal_v2(CUdeviceptr* dptr, size_t* bytes, CUmodule hmod, const char* name) {
  return api_call([&] {
    if (!valid_module(hmod)) return CUDA_ERROR_INVALID_HANDLE;
    return get_variable(dptr, bytes, hmod, name);
  });
}

CUresult CUDAAPI cuModuleGetLoadingMode(CUmoduleLoadingMode* mode) {
  return api_call([&] {
    if (!mode) return CUDA_ERROR_INVALID_VALUE;
    *mode = state().config.lazy_loading ? CU_MODULE_LAZY_LOADING : CU_MODULE_EAGER_LOADING;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option* jitOptions,
                                   void** jitOptionsValues, unsigned int numJitOptions, CUlibraryOption* libraryOptions,
                                   void** libraryOptionValues, unsigned int numLibraryOptions) {
  return api_call([&] {
    (void)libraryOptions;
    (void)libraryOptionValues;
    (void)numLibraryOptions;
    if (!library) return CUDA_ERROR_INVALID_VALUE;
    CUmod_st* module = nullptr;
    if (CUresult result = load_module(code, nullptr, module); result != CUDA_SUCCESS) return result;
    answer_jit_options(numJitOptions, jitOptions, jitOptionsValues);
    return make_library(library, module);
  });
}

CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary* library, const char* fileName, CUjit_option* jitOptions,
                                       void** jitOptionsValues, unsigned int numJitOptions,
                                       CUlibraryOption* libraryOptions, void** libraryOptionValues,
                                       unsigned int numLibraryOptions) {
  return api_call([&] {
    (void)libraryOptions;
    (void)libraryOptionValues;
    (void)numLibraryOptions;
    if (!library) return CUDA_ERROR_INVALID_VALUE;
    CUmod_st* module = nullptr;
    if (CUresult result = load_module_from_file(fileName, nullptr, module); result != CUDA_SUCCESS) return result;
    answer_jit_options(numJitOptions, jitOptions, jitOptionsValues);
    return make_library(library, module);
  });
}

CUresult CUDAAPI cuLibraryUnload(CUlibrary library) {
  return api_call([&] {
    if (!valid_library(library)) return CUDA_ERROR_INVALID_HANDLE;
    state().libraries.erase(library);
    unload_module(library->module);
    delete library;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name) {
  return api_call([&] {
    if (!pKernel || !name) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_library(library)) return CUDA_ERROR_INVALID_HANDLE;
    CUfunc_st* function = find_function(library->module, name);
    if (!function) return CUDA_ERROR_NOT_FOUND;
    *pKernel = reinterpret_cast<CUkernel>(function);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuLibraryGetKernelCount(unsigned int* count, CUlibrary lib) {
  return api_call([&] {
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_library(lib)) return CUDA_ERROR_INVALID_HANDLE;
    *count = unsigned(lib->module->functions.size());
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuLibraryEnumerateKernels(CUkernel* kernels, unsigned int numKernels, CUlibrary lib) {
  return api_call([&] {
    if (!kernels) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_library(lib)) return CUDA_ERROR_INVALID_HANDLE;
    const auto& functions = lib->module->functions;
    for (size_t i = 0; i < functions.size() && i < numKernels; ++i) {
      kernels[i] = reinterpret_cast<CUkernel>(functions[i]);
    }
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuLibraryGetModule(CUmodule* pMod, CUlibrary library) {
  return api_call([&] {
    if (!pMod) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_library(library)) return CUDA_ERROR_INVALID_HANDLE;
    *pMod = library->module;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuLibraryGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUlibrary library, const char* name) {
  return api_call([&] {
    if (!valid_library(library)) return CUDA_ERROR_INVALID_HANDLE;
    return get_variable(dptr, bytes, library->module, name);
  });
}

CUresult CUDAAPI cuLibraryGetManaged(CUdeviceptr* dptr, size_t* bytes, CUlibrary library, const char* name) {
  return api_call([&] {
    if (!valid_library(library)) return CUDA_ERROR_INVALID_HANDLE;
    return get_variable(dptr, bytes, library->module, name, true);
  });
}

CUresult CUDAAPI cuKernelGetFunction(CUfunction* pFunc, CUkernel kernel) {
  return api_call([&] {
    if (!pFunc) return CUDA_ERROR_INVALID_VALUE;
    CUfunc_st* function = as_function(kernel);
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    CUctx_st* context = nullptr;
    if (CUresult result = require_current_context(context); result != CUDA_SUCCESS) return result;
    *pFunc = function;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuKernelGetLibrary(CUlibrary* pLib, CUkernel kernel) {
  return api_call([&] {
    if (!pLib) return CUDA_ERROR_INVALID_VALUE;
    CUfunc_st* function = as_function(kernel);
    if (!function || !function->module->library) return CUDA_ERROR_INVALID_HANDLE;
    *pLib = function->module->library;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuFuncGetModule(CUmodule* hmod, CUfunction hfunc) {
  return api_call([&] {
    if (!hmod) return CUDA_ERROR_INVALID_VALUE;
    CUfunc_st* function = as_function(hfunc);
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    *hmod = function->module;
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
