// Copies and memsets: every cuMemcpy* (1D, 2D, 3D, peer, arrays, batches) and
// cuMemsetD* (1D and 2D), sync and async, each with its per-thread variant.
// Synchronous forms run on the legacy default stream (the per-thread one
// for _ptds) and block the host. Both ends of a copy are classified by the
// pointers' attributes (memory_kinds.h).
#pragma once

#include "preload/cuda/memory_kinds.h"
#include "preload/cuda/rows/row_support.h"
#include "preload/cuda/stream_operation.h"
#include "preload/stacks/stacks.h"

namespace proflaunch::cuda {

struct CopyRow {
  MemoryEnd dst;
  MemoryEnd src;
  uint64_t bytes = 0;
  CUstream stream = nullptr;
  bool async = false;

  // "API synchronization behavior" (CUDA driver API documentation): a
  // synchronous copy returns once the copy is done when it ends in host
  // memory, or starts in pinned host memory; from pageable memory it may
  // return once the data is staged, and device to device it does not wait.
  bool done_by_return() const noexcept {
    if (async) return false;
    const bool to_host = dst.kind == format::MemoryKind::kPageableHost || dst.kind == format::MemoryKind::kPinnedHost;
    return to_host || src.kind == format::MemoryKind::kPinnedHost;
  }

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !cuda_domain_recording()) return call_real();
    CopyRow row = describe();
    classify(row.src);
    classify(row.dst);
    // An "async" copy from or to pageable memory may wait for the GPU
    // (staging): it is submitted as the synchronous copy it may be.
    const bool may_block = !row.async || is_pageable(row.src) || is_pageable(row.dst);
    StreamOperation operation(Hook::api, Operation::kCopy, Hook::per_thread, row.async,
                              may_block ? Submission::kSynchronous : Submission::kAsynchronous, row.stream,
                              row.done_by_return());
    const CUresult result = call_real();
    operation.returned(result);
    if (auto* record = emit<format::MemoryCopyRecord>()) {
      operation.finish(*record, result);
      const format::CopyDirection direction = direction_between(row.src, row.dst);
      record->bytes = row.bytes;
      record->src = row.src.address;
      record->dst = row.dst.address;
      record->direction = static_cast<uint8_t>(direction);
      record->src_kind = static_cast<uint8_t>(row.src.kind);
      record->dst_kind = static_cast<uint8_t>(row.dst.kind);
      record->peer_device = direction == format::CopyDirection::kPeer ? row.src.device : -1;
      record->src_device = row.src.device;
      record->dst_device = row.dst.device;
      commit();
      stacks::attach_stacks(operation.correlation(), format::StackPoint::kLaunch);
    }
    operation.queue(format::GpuActivityKind::kMemoryCopy);
    return result;
  }
};

struct MemorySetRow {
  MemoryEnd dst;
  uint32_t value = 0;
  uint8_t element_bytes = 1;
  uint64_t bytes = 0;
  CUstream stream = nullptr;
  bool async = false;

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !cuda_domain_recording()) return call_real();
    MemorySetRow row = describe();
    classify(row.dst);
    // A synchronous memset waits for the GPU only when it sets pinned host
    // or managed memory (the same documentation).
    const bool waits = !row.async && (row.dst.kind == format::MemoryKind::kPinnedHost ||
                                      row.dst.kind == format::MemoryKind::kManaged);
    StreamOperation operation(Hook::api, Operation::kSet, Hook::per_thread, row.async,
                              row.async ? Submission::kAsynchronous : Submission::kSynchronous, row.stream, waits);
    const CUresult result = call_real();
    operation.returned(result);
    if (auto* record = emit<format::MemorySetRecord>()) {
      operation.finish(*record, result);
      record->bytes = row.bytes;
      record->dst = row.dst.address;
      record->value = row.value;
      record->element_bytes = row.element_bytes;
      record->dst_kind = static_cast<uint8_t>(row.dst.kind);
      commit();
      stacks::attach_stacks(operation.correlation(), format::StackPoint::kLaunch);
    }
    operation.queue(format::GpuActivityKind::kMemorySet);
    return result;
  }
};

namespace rows {

// One end of a copy, as the API declares it. Addresses come as CUdeviceptr
// (32-bit in the CUDA 2.x variants), host pointers or arrays.
template <typename Address>
inline uint64_t address_of(Address address) noexcept {
  if constexpr (std::is_pointer_v<Address>) return reinterpret_cast<uint64_t>(address);
  else return static_cast<uint64_t>(address);
}
template <typename Address>
inline MemoryEnd unified(Address address) noexcept { return {address_of(address), DeclaredMemory::kUnified}; }
template <typename Address>
inline MemoryEnd host_memory(Address address) noexcept { return {address_of(address), DeclaredMemory::kHost}; }
template <typename Address>
inline MemoryEnd device_memory(Address address) noexcept { return {address_of(address), DeclaredMemory::kDevice}; }
template <typename Address>
inline MemoryEnd peer_memory(Address address, CUcontext context) noexcept {
  return {address_of(address), DeclaredMemory::kDevice, context};
}
inline MemoryEnd array_memory(CUarray array) noexcept { return {address_of(array), DeclaredMemory::kArray}; }

inline CopyRow copy(MemoryEnd dst, MemoryEnd src, uint64_t bytes) noexcept { return {dst, src, bytes, nullptr, false}; }
inline CopyRow copy(MemoryEnd dst, MemoryEnd src, uint64_t bytes, CUstream stream) noexcept {
  return {dst, src, bytes, stream, true};
}

// The ends of a 2D or 3D copy descriptor (CUDA_MEMCPY2D/3D[_PEER], any version).
template <typename Descriptor>
inline MemoryEnd source_of(const Descriptor& d) noexcept {
  switch (d.srcMemoryType) {
    case CU_MEMORYTYPE_HOST: return host_memory(d.srcHost);
    case CU_MEMORYTYPE_DEVICE: return device_memory(d.srcDevice);
    case CU_MEMORYTYPE_ARRAY: return array_memory(d.srcArray);
    default: return unified(d.srcDevice);
  }
}
template <typename Descriptor>
inline MemoryEnd destination_of(const Descriptor& d) noexcept {
  switch (d.dstMemoryType) {
    case CU_MEMORYTYPE_HOST: return host_memory(d.dstHost);
    case CU_MEMORYTYPE_DEVICE: return device_memory(d.dstDevice);
    case CU_MEMORYTYPE_ARRAY: return array_memory(d.dstArray);
    default: return unified(d.dstDevice);
  }
}

// A NULL descriptor is the driver's to reject: the row records an empty copy.
template <typename Descriptor>
inline CopyRow descriptor_copy(const Descriptor* d, uint64_t depth, CUstream stream, bool async) noexcept {
  if (d == nullptr) return {{}, {}, 0, stream, async};
  return {destination_of(*d), source_of(*d), uint64_t{d->WidthInBytes} * d->Height * depth, stream, async};
}

template <typename Descriptor>
inline CopyRow copy_2d(const Descriptor* d) noexcept { return descriptor_copy(d, 1, nullptr, false); }
template <typename Descriptor>
inline CopyRow copy_2d(const Descriptor* d, CUstream stream) noexcept { return descriptor_copy(d, 1, stream, true); }

template <typename Descriptor>
inline CopyRow copy_3d(const Descriptor* d) noexcept {
  return descriptor_copy(d, d != nullptr ? d->Depth : 0, nullptr, false);
}
template <typename Descriptor>
inline CopyRow copy_3d(const Descriptor* d, CUstream stream) noexcept {
  return descriptor_copy(d, d != nullptr ? d->Depth : 0, stream, true);
}

template <typename Descriptor>
inline CopyRow peer_contexts(CopyRow row, const Descriptor* d) noexcept {
  if (d != nullptr) {
    row.src.context = d->srcContext;
    row.dst.context = d->dstContext;
  }
  return row;
}
template <typename Descriptor>
inline CopyRow copy_3d_peer(const Descriptor* d) noexcept { return peer_contexts(copy_3d(d), d); }
template <typename Descriptor>
inline CopyRow copy_3d_peer(const Descriptor* d, CUstream stream) noexcept {
  return peer_contexts(copy_3d(d, stream), d);
}

// cuMemcpyBatchAsync: several copies in one call, recorded as one copy of
// their total size, its ends those of the first copy.
template <typename Pointers, typename Sizes>
inline CopyRow copy_batch(Pointers dsts, Pointers srcs, Sizes sizes, size_t count, CUstream stream) noexcept {
  CopyRow row{{}, {}, 0, stream, true};
  if (dsts == nullptr || srcs == nullptr || sizes == nullptr || count == 0) return row;
  row.dst = unified(dsts[0]);
  row.src = unified(srcs[0]);
  for (size_t i = 0; i < count; ++i) row.bytes += sizes[i];
  return row;
}

// cuMemsetD8/16/32 and their 2D forms: `width` elements per row.
template <typename Address, typename Value>
inline MemorySetRow memory_set(Address dst, Value value, uint8_t element_bytes, uint64_t width, uint64_t height) noexcept {
  return {unified(dst), static_cast<uint32_t>(value), element_bytes, width * height * element_bytes, nullptr, false};
}
template <typename Address, typename Value>
inline MemorySetRow memory_set(Address dst, Value value, uint8_t element_bytes, uint64_t width, uint64_t height,
                               CUstream stream) noexcept {
  return {unified(dst), static_cast<uint32_t>(value), element_bytes, width * height * element_bytes, stream, true};
}

}  // namespace rows
}  // namespace proflaunch::cuda
