// Copies and memsets: every cuMemcpy* (1D, 2D, 3D, peer, arrays, batches) and
// cuMemsetD* (1D and 2D), sync and async, each with its per-thread variant.
// Synchronous forms run on the legacy default stream (the per-thread one
// for _ptds) and block the host. Both ends of a copy are classified by the
// pointers' attributes (memory_kinds.h). The families are HIP's copies and
// memsets too (hip/hip_rows.h): CopyRowOf<HipVendor>, MemorySetRowOf<HipVendor>.
#pragma once

#include "preload/cuda/rows/cuda_vendor.h"
#include "preload/cuda/rows/row_support.h"

namespace proflaunch::cuda {

// The direction of a copy between two classified ends (either vendor's
// MemoryEnd: a kind and a device): a device-to-device copy between two
// different devices is a peer copy.
template <typename End>
format::CopyDirection direction_between(const End& src, const End& dst) noexcept {
  using format::CopyDirection;
  using format::MemoryKind;
  auto is_host = [](MemoryKind kind) { return kind == MemoryKind::kPageableHost || kind == MemoryKind::kPinnedHost; };
  if (src.kind == MemoryKind::kUnknown || dst.kind == MemoryKind::kUnknown) return CopyDirection::kUnknown;
  if (is_host(src.kind)) return is_host(dst.kind) ? CopyDirection::kHostToHost : CopyDirection::kHostToDevice;
  if (is_host(dst.kind)) return CopyDirection::kDeviceToHost;
  if (src.device >= 0 && dst.device >= 0 && src.device != dst.device) return CopyDirection::kPeer;
  return CopyDirection::kDeviceToDevice;
}

template <typename Vendor>
struct CopyRowOf {
  typename Vendor::MemoryEnd dst;
  typename Vendor::MemoryEnd src;
  uint64_t bytes = 0;
  typename Vendor::Stream stream = nullptr;
  bool async = false;

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !Vendor::recording()) return call_real();
    CopyRowOf row = describe();
    Vendor::classify(row.src);
    Vendor::classify(row.dst);
    typename Vendor::StreamOperation operation(Hook::api, Operation::kCopy, Hook::per_thread, row.async,
                                               Vendor::copy_submission(row.async, row.src, row.dst), row.stream,
                                               Vendor::copy_done_by_return(row.async, row.src, row.dst));
    return submit<format::MemoryCopyRecord>(operation, call_real, format::GpuActivityKind::kMemoryCopy,
                                            [&](format::MemoryCopyRecord& record) {
      const format::CopyDirection direction = direction_between(row.src, row.dst);
      record.bytes = row.bytes;
      record.src = row.src.address;
      record.dst = row.dst.address;
      record.direction = static_cast<uint8_t>(direction);
      record.src_kind = static_cast<uint8_t>(row.src.kind);
      record.dst_kind = static_cast<uint8_t>(row.dst.kind);
      record.peer_device = direction == format::CopyDirection::kPeer ? row.src.device : -1;
      record.src_device = row.src.device;
      record.dst_device = row.dst.device;
    });
  }
};
using CopyRow = CopyRowOf<CudaVendor>;

template <typename Vendor>
struct MemorySetRowOf {
  typename Vendor::MemoryEnd dst;
  uint32_t value = 0;
  uint8_t element_bytes = 1;
  uint64_t bytes = 0;
  typename Vendor::Stream stream = nullptr;
  bool async = false;

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !Vendor::recording()) return call_real();
    MemorySetRowOf row = describe();
    Vendor::classify(row.dst);
    typename Vendor::StreamOperation operation(Hook::api, Operation::kSet, Hook::per_thread, row.async,
                                               row.async ? Submission::kAsynchronous : Submission::kSynchronous,
                                               row.stream, Vendor::memset_done_by_return(row.async, row.dst));
    return submit<format::MemorySetRecord>(operation, call_real, format::GpuActivityKind::kMemorySet,
                                           [&](format::MemorySetRecord& record) {
      record.bytes = row.bytes;
      record.dst = row.dst.address;
      record.value = row.value;
      record.element_bytes = row.element_bytes;
      record.dst_kind = static_cast<uint8_t>(row.dst.kind);
    });
  }
};
using MemorySetRow = MemorySetRowOf<CudaVendor>;

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
