// Turns the `image` pointer of cuModuleLoadData / cuLibraryLoadData into a
// ModuleImage: detects a fatbin wrapper, a fatbin container, a cubin or PTX
// text; picks the entry a real device of the simulated compute capability
// would run; and never reads memory that is not mapped (a truncated or bogus
// image gets an error, not a crash).
#pragma once

#include "cubin.h"
#include "cuda_api.h"

namespace simgpu {

struct ImageTarget {
  int sm_arch = 90;  // the device: compute capability major * 10 + minor
  bool ptx_jit_enabled = true;
};

// Result codes follow the real driver's documented ones:
//   CUDA_ERROR_INVALID_VALUE       image is NULL or its first byte is not mapped
//   CUDA_ERROR_INVALID_IMAGE       not a recognized or a malformed image
//   CUDA_ERROR_NO_BINARY_FOR_GPU   no cubin for this device and no usable PTX
//   CUDA_ERROR_JIT_COMPILER_NOT_FOUND  raw PTX while PTX JIT is disabled
CUresult load_module_image(const void* image, const ImageTarget& target, ModuleImage& out);

// The same for an image whose size is known (a file read into memory).
CUresult load_module_image_bytes(const uint8_t* data, size_t bytes, const ImageTarget& target, ModuleImage& out);

// True if all of [address, address + bytes) is mapped in this process.
bool memory_is_mapped(const void* address, size_t bytes);

}  // namespace simgpu
