// Every export of the real runtime that this one does not implement still
// exists here, so a program linked against the real libcudart.so.13 loads and
// gets a clean cudaErrorNotSupported instead of a missing-symbol failure.
//
// This file must not include cuda_runtime_api.h: the stubs are defined
// without parameters, which C++ would reject as conflicting declarations.
// Every unimplemented function returns cudaError_t, and under the x86-64 SysV
// convention the caller owns its arguments, so a parameterless definition
// returning cudaError_t is call-compatible with each real signature.
#include <driver_types.h>

#include "errors.h"

using simgpu_runtime::finish;

extern "C" {

#define SIMGPU_RUNTIME_UNSUPPORTED(name) \
  cudaError_t name() { return finish(cudaErrorNotSupported); }
#include "unsupported_exports.inc"
#undef SIMGPU_RUNTIME_UNSUPPORTED

// Private registration hooks of the real runtime with undocumented
// signatures (nvcc 13 host code does not call them). Called from static
// constructors, so they record nothing: they return without effect.
cudaError_t __cudaRegisterHostVar() { return cudaErrorNotSupported; }
cudaError_t __cudaRegisterUnifiedTable() { return cudaErrorNotSupported; }
cudaError_t __cudaGetProcAddress() { return cudaErrorNotSupported; }

}  // extern "C"
