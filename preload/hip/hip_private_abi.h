// The host side of the HIP compiler ABI: what clang's HIP code generation
// calls in libamdhip64 to register a program's device code and launch its
// kernels (`<<<>>>`). tid and bid are uint3* (pointers: same ABI). No HIP header declares these except
// __hipPushCallConfiguration; the signatures are those of clang's HIP code
// generation (CGCUDANV.cpp) and of the HIP runtime that implements them.
#pragma once

#include "preload/hip/hip_headers.h"

extern "C" {

// What clang's module constructor passes: magic "HIPF" (0x48495046),
// version 1, and the clang offload bundle with the device code objects.
struct __hipFatBinaryWrapper {
  unsigned int magic;
  unsigned int version;
  const void* binary;
  void* reserved;
};
inline constexpr unsigned int kHipFatBinaryMagic = 0x48495046;

void** __hipRegisterFatBinary(const void* data);
void __hipUnregisterFatBinary(void** modules);
void __hipRegisterFunction(void** modules, const void* hostFunction, char* deviceFunction, const char* deviceName,
                           unsigned int threadLimit, void* tid, void* bid, dim3* blockDim, dim3* gridDim,
                           int* wSize);
void __hipRegisterVar(void** modules, void* var, char* hostVar, char* deviceVar, int ext, size_t size,
                      int constant, int global);
void __hipRegisterManagedVar(void* hipModule, void** pointer, void* init_value, const char* name, size_t size,
                             unsigned align);
hipError_t __hipPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem, hipStream_t* stream);

}  // extern "C"
