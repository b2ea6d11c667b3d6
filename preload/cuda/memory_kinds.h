// Classifying the memory a copy touches: pinned vs pageable host memory
// decides whether an async copy is really asynchronous, and managed memory
// migrates. One cuPointerGetAttribute per host-side pointer of a copy (a
// copy costs microseconds; the query a fraction of that).
#pragma once

#include <cuda.h>

#include "formats/records.h"

namespace proflaunch::cuda {

// A pointer the API documents as host memory: pinned if the driver knows it
// (cuMemAllocHost, cuMemHostAlloc, cuMemHostRegister), else pageable.
format::MemoryKind host_memory_kind(const void* pointer) noexcept;

// Any pointer (unified addressing, cuMemcpy): host, device or managed.
format::MemoryKind any_memory_kind(CUdeviceptr pointer) noexcept;

// The direction of a copy between two kinds of memory.
format::CopyDirection direction_between(format::MemoryKind src, format::MemoryKind dst) noexcept;

}  // namespace proflaunch::cuda
