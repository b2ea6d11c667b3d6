// Classifying the memory a copy or memset touches, from the pointers'
// attributes (unified addressing): pageable or pinned host memory, device
// memory and which device, managed memory, arrays. Pinned versus pageable
// decides whether an async copy is really asynchronous, managed memory
// migrates, and two devices make a copy a peer copy however it was asked for
// (cudaMemcpyDefault and cuMemcpy between two GPUs are peer copies too).
// One cuPointerGetAttributes per pointer: a copy costs microseconds, the
// query a fraction of that.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "formats/records.h"

namespace proflaunch::cuda {

// What the API says a pointer is. The attributes decide where the API
// leaves it open (unified), and refine the rest (which device; pinned or not).
enum class DeclaredMemory : uint8_t { kHost, kDevice, kUnified, kArray };

struct MemoryEnd {
  uint64_t address = 0;
  DeclaredMemory declared = DeclaredMemory::kUnified;
  CUcontext context = nullptr;  // a peer copy's explicit context, else null
  format::MemoryKind kind = format::MemoryKind::kUnknown;
  int32_t device = -1;          // -1: host memory, or not known
};

// Fills kind and device (cold-ish: one driver query).
void classify(MemoryEnd& end) noexcept;

// The direction of a copy between two classified ends: direction_between
// (rows/copy_row.h), for either vendor's ends.

inline bool is_pageable(const MemoryEnd& end) noexcept { return end.kind == format::MemoryKind::kPageableHost; }

}  // namespace proflaunch::cuda
