// Runtime error codes: the driver-to-runtime mapping and the per-thread
// last-error state behind cudaGetLastError / cudaPeekAtLastError.
#pragma once

#include <cuda.h>
#include <driver_types.h>

namespace simgpu_runtime {

// The runtime error a driver result surfaces as. cudaError_t was renumbered
// (CUDA 10.1) so that every CUresult with a runtime counterpart has the same
// value; results without one become cudaErrorUnknown.
cudaError_t runtime_error_from(CUresult result);

// Whether `value` is one of the cudaError_t enumerators of this CUDA version.
bool is_known_runtime_error(int value);

// Records `error` as the calling thread's last error (cudaSuccess and
// cudaErrorNotReady are not errors and leave it alone) and returns it, so an
// entry point ends with `return finish(...)`.
cudaError_t finish(cudaError_t error);
cudaError_t finish(CUresult result);

// Thread-local last error: take() resets it to cudaSuccess, peek() does not.
cudaError_t take_last_error();
cudaError_t peek_last_error();

}  // namespace simgpu_runtime
