// Device code registration (__hipRegisterFatBinary, __hipRegisterFunction,
// __hipRegisterVar, __hipRegisterManagedVar), the <<<>>> call configuration,
// kernel launches and the module API.
//
// A registered kernel exists on a device only if the program's bundle has a
// code object for the device's target, and only if that code object has the
// kernel: otherwise hipErrorNoBinaryForGpu / hipErrorInvalidDeviceFunction at
// launch, as on real hardware. Each (bundle, device) becomes one engine module
// of the code object's kernels, loaded at the first launch.
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "code_objects.h"
#include "engine.h"
#include "hip_state.h"
#include "kernel_metadata.h"

namespace simhip {
namespace {

constexpr int kMaxDevices = 64;

struct FatBinary {
  std::vector<BundleEntry> entries;
  bool loaded[kMaxDevices] = {};
  hipError_t result[kMaxDevices] = {};
  CUmodule module[kMaxDevices] = {};
};

struct RegisteredFunction {
  FatBinary* binary;
  std::string name;
};

struct RegisteredVariable {
  FatBinary* binary;
  std::string name;
  size_t bytes;
  const void* host_shadow;
  CUdeviceptr address[kMaxDevices] = {};
};

std::mutex g_mutex;  // guards everything below
std::unordered_map<const void*, RegisteredFunction>& functions() {
  static auto* map = new std::unordered_map<const void*, RegisteredFunction>;
  return *map;
}
std::unordered_map<const void*, RegisteredVariable>& variables() {
  static auto* map = new std::unordered_map<const void*, RegisteredVariable>;
  return *map;
}

// The module of `binary`'s code object for the current device. Caller holds g_mutex.
hipError_t module_for(FatBinary& binary, CUmodule* module) {
  const int device = current_device();
  if (device < 0 || device >= kMaxDevices) return hipErrorInvalidDevice;
  if (!binary.loaded[device]) {
    binary.loaded[device] = true;
    // The host time of reading the bundle and loading its code object.
    if (machine().code_object_load_ns > 0) {
      const timespec load{time_t(machine().code_object_load_ns / 1'000'000'000),
                          long(machine().code_object_load_ns % 1'000'000'000)};
      nanosleep(&load, nullptr);
    }
    binary.result[device] = hipErrorNoBinaryForGpu;
    for (const BundleEntry& entry : binary.entries) {
      if (!target_matches(entry.id, machine().arch)) continue;
      std::vector<std::string> kernels;
      if (!code_object_kernels(entry.data, entry.bytes, kernels)) {
        binary.result[device] = hipErrorInvalidKernelFile;
        break;
      }
      CUmod_st* loaded = nullptr;
      binary.result[device] = to_hip(simgpu::load_named_kernels(kernels, nullptr, loaded));
      binary.module[device] = loaded;
      if (loaded != nullptr) remember_kernel_resources(loaded, code_object_kernel_resources(entry.data, entry.bytes));
      break;
    }
  }
  *module = binary.module[device];
  return binary.result[device];
}

}  // namespace

hipError_t registered_function(const void* host_function, CUfunction* function) {
  std::lock_guard lock(g_mutex);
  auto it = functions().find(host_function);
  if (it == functions().end()) return hipErrorInvalidDeviceFunction;
  CUmodule module = nullptr;
  if (hipError_t result = module_for(*it->second.binary, &module); result != hipSuccess) return result;
  if (cuModuleGetFunction(function, module, it->second.name.c_str()) != CUDA_SUCCESS)
    return hipErrorInvalidDeviceFunction;
  return hipSuccess;
}

namespace {

struct CallConfiguration {
  dim3 grid, block;
  size_t shared_bytes;
  hipStream_t stream;
};
thread_local std::vector<CallConfiguration> tl_configurations;

hipStream_t per_thread(hipStream_t stream) { return stream == nullptr ? hipStreamPerThread : stream; }

hipError_t launch(CUfunction function, dim3 grid, dim3 block, size_t shared_bytes, hipStream_t stream,
                  void** args, void** extra, bool cooperative) {
  if (shared_bytes > UINT32_MAX) return hipErrorInvalidValue;
  CUresult result;
  if (cooperative) {
    result = cuLaunchCooperativeKernel(function, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                       unsigned(shared_bytes), cu(stream), args);
  } else {
    result = cuLaunchKernel(function, grid.x, grid.y, grid.z, block.x, block.y, block.z, unsigned(shared_bytes),
                            cu(stream), args, extra);
  }
  // The driver says "invalid value" for a bad configuration, HIP "invalid configuration".
  return result == CUDA_ERROR_INVALID_VALUE ? hipErrorInvalidConfiguration : to_hip(result);
}

hipError_t launch_registered(const void* host_function, dim3 grid, dim3 block, void** args, size_t shared_bytes,
                             hipStream_t stream, bool cooperative) {
  return device_api([&] {
    CUfunction function = nullptr;
    if (hipError_t found = registered_function(host_function, &function); found != hipSuccess) return found;
    return launch(function, grid, block, shared_bytes, stream, args, nullptr, cooperative);
  });
}

// HIP's launch-parameter markers (hip_runtime_api.h) differ from the driver's
// in the end marker: HIP_LAUNCH_PARAM_END is 3, CU_LAUNCH_PARAM_END is 0.
bool translate_extra(void** extra, std::vector<void*>& out) {
  out.clear();
  if (extra == nullptr) return true;
  for (int i = 0; i < 64; i += 2) {
    if (extra[i] == HIP_LAUNCH_PARAM_END) {
      out.push_back(CU_LAUNCH_PARAM_END);
      return true;
    }
    if (extra[i] == HIP_LAUNCH_PARAM_BUFFER_POINTER) {
      out.push_back(CU_LAUNCH_PARAM_BUFFER_POINTER);
    } else if (extra[i] == HIP_LAUNCH_PARAM_BUFFER_SIZE) {
      out.push_back(CU_LAUNCH_PARAM_BUFFER_SIZE);
    } else {
      return false;
    }
    out.push_back(extra[i + 1]);
  }
  return false;
}

// The extended launches' events belong to the kernel's own dispatch (HIP's
// hip_ext.h): the start event refers to the moment the kernel starts on the
// device, the stop event to its end, not to when the host made the call. A
// launch that fails records neither.
hipError_t module_launch(hipFunction_t f, dim3 grid, dim3 block, size_t shared_bytes, hipStream_t stream,
                         void** params, void** extra, hipEvent_t start, hipEvent_t stop) {
  return device_api([&] {
    std::vector<void*> translated;
    if (!translate_extra(extra, translated)) return hipErrorInvalidValue;
    void** driver_extra = extra != nullptr ? translated.data() : nullptr;
    if (start == nullptr && stop == nullptr)
      return launch(cu(f), grid, block, shared_bytes, stream, params, driver_extra, false);
    if (shared_bytes > UINT32_MAX) return hipErrorInvalidValue;
    const unsigned grid_dims[3] = {grid.x, grid.y, grid.z}, block_dims[3] = {block.x, block.y, block.z};
    const CUresult result = simgpu::launch_kernel_with_events(cu(f), grid_dims, block_dims, unsigned(shared_bytes),
                                                              cu(stream), params, driver_extra, cu(start), cu(stop));
    return result == CUDA_ERROR_INVALID_VALUE ? hipErrorInvalidConfiguration : to_hip(result);
  });
}

unsigned blocks_for(uint32_t global, uint32_t local) { return local == 0 ? 0 : (global + local - 1) / local; }

// Bytes of an ELF image in memory: the furthest of its section header table
// and its sections (0 if it is not an ELF64 header).
size_t elf_extent(const uint8_t* data) {
  Elf64_Ehdr header;
  std::memcpy(&header, data, sizeof header);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64) return 0;
  size_t end = header.e_shoff + size_t(header.e_shnum) * header.e_shentsize;
  for (size_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr section;
    std::memcpy(&section, data + header.e_shoff + i * sizeof section, sizeof section);
    if (section.sh_type != SHT_NOBITS) end = std::max<size_t>(end, section.sh_offset + section.sh_size);
  }
  return end;
}

// A module from a code object or a bundle (hipModuleLoadData's image).
hipError_t load_image(const uint8_t* image, size_t bytes, hipModule_t* module) {
  std::vector<BundleEntry> entries;
  const bool bundle = bytes != 0 ? parse_bundle(image, bytes, entries) : parse_bundle(image, entries);
  const uint8_t* code = image;
  size_t code_bytes = bytes;
  if (bundle) {
    code = nullptr;
    for (const BundleEntry& entry : entries) {
      if (target_matches(entry.id, machine().arch)) {
        code = entry.data;
        code_bytes = entry.bytes;
        break;
      }
    }
    if (code == nullptr) return hipErrorNoBinaryForGpu;
  } else if (code_bytes == 0) {
    code_bytes = elf_extent(code);
  }
  std::vector<std::string> kernels;
  if (code_bytes == 0 || !code_object_kernels(code, code_bytes, kernels)) return hipErrorInvalidImage;
  CUmod_st* loaded = nullptr;
  if (CUresult r = simgpu::load_named_kernels(kernels, nullptr, loaded); r != CUDA_SUCCESS) return to_hip(r);
  remember_kernel_resources(loaded, code_object_kernel_resources(code, code_bytes));
  *module = reinterpret_cast<hipModule_t>(loaded);
  return hipSuccess;
}

}  // namespace

const char* registered_kernel_name(const void* host_function) {
  std::lock_guard lock(g_mutex);
  auto it = functions().find(host_function);
  return it == functions().end() ? nullptr : it->second.name.c_str();
}

// The device address of a registered variable on the current device,
// allocated and initialized from its host shadow on first use.
hipError_t symbol_address(const void* symbol, CUdeviceptr* address, size_t* bytes) {
  std::lock_guard lock(g_mutex);
  auto it = variables().find(symbol);
  if (it == variables().end()) return hipErrorInvalidSymbol;
  RegisteredVariable& variable = it->second;
  const int device = current_device();
  if (variable.address[device] == 0) {
    CUmodule module = nullptr;
    if (hipError_t result = module_for(*variable.binary, &module); result != hipSuccess) return result;
    if (CUresult r = cuMemAlloc(&variable.address[device], std::max<size_t>(variable.bytes, 1)); r != CUDA_SUCCESS)
      return to_hip(r);
    if (CUresult r = cuMemcpyHtoD(variable.address[device], variable.host_shadow, variable.bytes); r != CUDA_SUCCESS)
      return to_hip(r);
  }
  *address = variable.address[device];
  if (bytes != nullptr) *bytes = variable.bytes;
  return hipSuccess;
}

}  // namespace simhip

using namespace simhip;

extern "C" {

void** __hipRegisterFatBinary(const void* data) {
  auto* binary = new FatBinary;
  const auto* wrapper = static_cast<const __hipFatBinaryWrapper*>(data);
  if (wrapper != nullptr && wrapper->magic == kHipFatBinaryMagic) parse_bundle(wrapper->binary, binary->entries);
  return reinterpret_cast<void**>(binary);
}

// Modules stay: the engine may still run their kernels at exit.
void __hipUnregisterFatBinary(void**) {}

void __hipRegisterFunction(void** modules, const void* hostFunction, char* deviceFunction, const char*, unsigned int,
                           void*, void*, dim3*, dim3*, int*) {
  if (modules == nullptr || hostFunction == nullptr || deviceFunction == nullptr) return;
  std::lock_guard lock(g_mutex);
  functions()[hostFunction] = RegisteredFunction{reinterpret_cast<FatBinary*>(modules), deviceFunction};
}

void __hipRegisterVar(void** modules, void* var, char*, char* deviceVar, int, size_t size, int, int) {
  if (modules == nullptr || var == nullptr || deviceVar == nullptr) return;
  std::lock_guard lock(g_mutex);
  variables()[var] = RegisteredVariable{reinterpret_cast<FatBinary*>(modules), deviceVar, size, var};
}

// A __managed__ variable: managed memory, initialized from init_value, whose
// address the program reads through *pointer.
void __hipRegisterManagedVar(void*, void** pointer, void* init_value, const char*, size_t size, unsigned) {
  if (pointer == nullptr) return;
  (void)device_api([&] {
    CUdeviceptr address = 0;
    if (CUresult r = cuMemAllocManaged(&address, std::max<size_t>(size, 1), CU_MEM_ATTACH_GLOBAL); r != CUDA_SUCCESS)
      return to_hip(r);
    if (init_value != nullptr) std::memcpy(reinterpret_cast<void*>(address), init_value, size);
    *pointer = reinterpret_cast<void*>(address);
    return hipSuccess;
  });
}

hipError_t __hipPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, hipStream_t stream) {
  tl_configurations.push_back(CallConfiguration{gridDim, blockDim, sharedMem, stream});
  return hipSuccess;
}

hipError_t __hipPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem, hipStream_t* stream) {
  if (tl_configurations.empty()) return hipErrorMissingConfiguration;
  const CallConfiguration c = tl_configurations.back();
  tl_configurations.pop_back();
  *gridDim = c.grid;
  *blockDim = c.block;
  *sharedMem = c.shared_bytes;
  *stream = c.stream;
  return hipSuccess;
}

hipError_t hipLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks, void** args,
                           size_t sharedMemBytes, hipStream_t stream) {
  return launch_registered(function_address, numBlocks, dimBlocks, args, sharedMemBytes, stream, false);
}

hipError_t hipLaunchKernel_spt(const void* function_address, dim3 numBlocks, dim3 dimBlocks, void** args,
                               size_t sharedMemBytes, hipStream_t stream) {
  return launch_registered(function_address, numBlocks, dimBlocks, args, sharedMemBytes, per_thread(stream), false);
}

hipError_t hipLaunchCooperativeKernel(const void* f, dim3 gridDim, dim3 blockDimX, void** kernelParams,
                                      unsigned int sharedMemBytes, hipStream_t stream) {
  return launch_registered(f, gridDim, blockDimX, kernelParams, sharedMemBytes, stream, true);
}

hipError_t hipLaunchCooperativeKernel_spt(const void* f, dim3 gridDim, dim3 blockDim, void** kernelParams,
                                          uint32_t sharedMemBytes, hipStream_t hStream) {
  return launch_registered(f, gridDim, blockDim, kernelParams, sharedMemBytes, per_thread(hStream), true);
}

hipError_t hipExtLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks, void** args,
                              size_t sharedMemBytes, hipStream_t stream, hipEvent_t startEvent, hipEvent_t stopEvent,
                              int) {
  return device_api([&] {
    CUfunction function = nullptr;
    if (hipError_t found = registered_function(function_address, &function); found != hipSuccess) return found;
    return module_launch(reinterpret_cast<hipFunction_t>(function), numBlocks, dimBlocks, sharedMemBytes, stream,
                         args, nullptr, startEvent, stopEvent);
  });
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                 unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                 unsigned int sharedMemBytes, hipStream_t stream, void** kernelParams, void** extra) {
  return module_launch(f, dim3(gridDimX, gridDimY, gridDimZ), dim3(blockDimX, blockDimY, blockDimZ), sharedMemBytes,
                       stream, kernelParams, extra, nullptr, nullptr);
}

}  // extern "C"

// C++ linkage in HIP 5.2 (hip_ext.h).
hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t globalWorkSizeX, uint32_t globalWorkSizeY,
                                    uint32_t globalWorkSizeZ, uint32_t localWorkSizeX, uint32_t localWorkSizeY,
                                    uint32_t localWorkSizeZ, size_t sharedMemBytes, hipStream_t hStream,
                                    void** kernelParams, void** extra, hipEvent_t startEvent, hipEvent_t stopEvent,
                                    uint32_t) {
  return module_launch(f,
                       dim3(blocks_for(globalWorkSizeX, localWorkSizeX), blocks_for(globalWorkSizeY, localWorkSizeY),
                            blocks_for(globalWorkSizeZ, localWorkSizeZ)),
                       dim3(localWorkSizeX, localWorkSizeY, localWorkSizeZ), sharedMemBytes, hStream, kernelParams,
                       extra, startEvent, stopEvent);
}

hipError_t hipHccModuleLaunchKernel(hipFunction_t f, uint32_t globalWorkSizeX, uint32_t globalWorkSizeY,
                                    uint32_t globalWorkSizeZ, uint32_t localWorkSizeX, uint32_t localWorkSizeY,
                                    uint32_t localWorkSizeZ, size_t sharedMemBytes, hipStream_t hStream,
                                    void** kernelParams, void** extra, hipEvent_t startEvent, hipEvent_t stopEvent) {
  return hipExtModuleLaunchKernel(f, globalWorkSizeX, globalWorkSizeY, globalWorkSizeZ, localWorkSizeX,
                                  localWorkSizeY, localWorkSizeZ, sharedMemBytes, hStream, kernelParams, extra,
                                  startEvent, stopEvent, 0);
}

extern "C" {

hipError_t hipModuleLoadData(hipModule_t* module, const void* image) {
  return device_api([&] {
    if (module == nullptr || image == nullptr) return hipErrorInvalidValue;
    return load_image(static_cast<const uint8_t*>(image), 0, module);
  });
}

hipError_t hipModuleLoadDataEx(hipModule_t* module, const void* image, unsigned int, hipJitOption*, void**) {
  return hipModuleLoadData(module, image);
}

hipError_t hipModuleLoad(hipModule_t* module, const char* fname) {
  return device_api([&] {
    if (module == nullptr || fname == nullptr) return hipErrorInvalidValue;
    std::ifstream file(fname, std::ios::binary);
    if (!file) return hipErrorFileNotFound;
    // Kept for the module's lifetime: its kernels are known by name only, but
    // the image is what a real runtime keeps too.
    auto* bytes = new std::vector<uint8_t>((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    return load_image(bytes->data(), bytes->size(), module);
  });
}

hipError_t hipModuleUnload(hipModule_t module) {
  return device_api([&] { return to_hip(cuModuleUnload(reinterpret_cast<CUmodule>(module))); });
}

hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* kname) {
  return device_api([&] {
    if (function == nullptr || kname == nullptr) return hipErrorInvalidValue;
    CUfunction found = nullptr;
    const CUresult r = cuModuleGetFunction(&found, reinterpret_cast<CUmodule>(module), kname);
    if (r != CUDA_SUCCESS) return r == CUDA_ERROR_NOT_FOUND ? hipErrorNotFound : to_hip(r);
    *function = reinterpret_cast<hipFunction_t>(found);
    return hipSuccess;
  });
}

const char* hipKernelNameRef(const hipFunction_t f) {
  const char* name = nullptr;
  return cuFuncGetName(&name, cu(f)) == CUDA_SUCCESS ? name : nullptr;
}

const char* hipKernelNameRefByPtr(const void* hostFunction, hipStream_t) { return registered_kernel_name(hostFunction); }

hipError_t hipGetSymbolAddress(void** devPtr, const void* symbol) {
  return device_api([&] {
    if (devPtr == nullptr) return hipErrorInvalidValue;
    CUdeviceptr address = 0;
    if (hipError_t r = symbol_address(symbol, &address, nullptr); r != hipSuccess) return r;
    *devPtr = reinterpret_cast<void*>(address);
    return hipSuccess;
  });
}

hipError_t hipGetSymbolSize(size_t* size, const void* symbol) {
  return device_api([&] {
    if (size == nullptr) return hipErrorInvalidValue;
    CUdeviceptr address = 0;
    return symbol_address(symbol, &address, size);
  });
}

}  // extern "C"
