// Turning a cudaMemcpyKind into the driver copy the real runtime would issue.
// Explicit kinds name the sides; cudaMemcpyDefault relies on unified
// addressing: the runtime asks the driver what each pointer is
// (cuPointerGetAttribute, CU_POINTER_ATTRIBUTE_MEMORY_TYPE) and memory the
// driver does not know is pageable host memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "driver_api.h"

namespace simgpu_runtime {

enum class MemorySide { host, device, unified };

struct CopySides {
  MemorySide source;
  MemorySide destination;
};

// The sides of a copy of `kind`, or cudaErrorInvalidMemcpyDirection.
cudaError_t copy_sides(const DriverApi& api, cudaMemcpyKind kind, void* destination,
                       const void* source, CopySides* sides);

// A linear copy: cuMemcpyHtoD/DtoH/DtoD (or cuMemcpy when host-to-host or
// managed memory is involved). With `stream` null it is the synchronous
// variant, otherwise the ...Async one on *stream.
cudaError_t copy_linear(const DriverApi& api, void* destination, const void* source,
                        std::size_t bytes, cudaMemcpyKind kind, const cudaStream_t* stream);

}  // namespace simgpu_runtime
