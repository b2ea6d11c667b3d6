// Copies and memsets: every cuMemcpy* direction, sync and async, peer
// copies, cuMemsetD8/16/32 and their async forms, each with its
// per-thread-default-stream variant. Synchronous forms run on the legacy
// default stream (the per-thread one for _ptds) and block the host.
#include <cuda.h>

#include "preload/cuda/api_call.h"
#include "preload/cuda/driver_services.h"
#include "preload/cuda/hook_registry.h"
#include "preload/cuda/memory_kinds.h"
#include "preload/cuda/recording.h"
#include "preload/cuda/stream_operation.h"
#include "preload/stacks/stacks.h"

extern "C" {
CUresult cuMemcpy_ptds(CUdeviceptr, CUdeviceptr, size_t);
CUresult cuMemcpyAsync_ptsz(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr, const void*, size_t);
CUresult cuMemcpyDtoH_v2_ptds(void*, CUdeviceptr, size_t);
CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr, CUdeviceptr, size_t);
CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr, const void*, size_t, CUstream);
CUresult cuMemcpyDtoHAsync_v2_ptsz(void*, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpyPeer_ptds(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t);
CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream);
CUresult cuMemsetD8_v2_ptds(CUdeviceptr, unsigned char, size_t);
CUresult cuMemsetD16_v2_ptds(CUdeviceptr, unsigned short, size_t);
CUresult cuMemsetD32_v2_ptds(CUdeviceptr, unsigned int, size_t);
CUresult cuMemsetD8Async_ptsz(CUdeviceptr, unsigned char, size_t, CUstream);
CUresult cuMemsetD16Async_ptsz(CUdeviceptr, unsigned short, size_t, CUstream);
CUresult cuMemsetD32Async_ptsz(CUdeviceptr, unsigned int, size_t, CUstream);
}

namespace proflaunch::cuda {
namespace {

using format::CopyDirection;
using format::MemoryKind;

void* real_cuMemcpy;
void* real_cuMemcpy_ptds;
void* real_cuMemcpyAsync;
void* real_cuMemcpyAsync_ptsz;
void* real_cuMemcpyHtoD_v2;
void* real_cuMemcpyHtoD_v2_ptds;
void* real_cuMemcpyDtoH_v2;
void* real_cuMemcpyDtoH_v2_ptds;
void* real_cuMemcpyDtoD_v2;
void* real_cuMemcpyDtoD_v2_ptds;
void* real_cuMemcpyHtoDAsync_v2;
void* real_cuMemcpyHtoDAsync_v2_ptsz;
void* real_cuMemcpyDtoHAsync_v2;
void* real_cuMemcpyDtoHAsync_v2_ptsz;
void* real_cuMemcpyDtoDAsync_v2;
void* real_cuMemcpyDtoDAsync_v2_ptsz;
void* real_cuMemcpyPeer;
void* real_cuMemcpyPeer_ptds;
void* real_cuMemcpyPeerAsync;
void* real_cuMemcpyPeerAsync_ptsz;
void* real_cuMemsetD8_v2;
void* real_cuMemsetD8_v2_ptds;
void* real_cuMemsetD16_v2;
void* real_cuMemsetD16_v2_ptds;
void* real_cuMemsetD32_v2;
void* real_cuMemsetD32_v2_ptds;
void* real_cuMemsetD8Async;
void* real_cuMemsetD8Async_ptsz;
void* real_cuMemsetD16Async;
void* real_cuMemsetD16Async_ptsz;
void* real_cuMemsetD32Async;
void* real_cuMemsetD32Async_ptsz;

struct CopyShape {
  CopyDirection direction;
  uint64_t src;
  uint64_t dst;
  uint64_t bytes;
  MemoryKind src_kind;
  MemoryKind dst_kind;
  int32_t peer_device;
};

// `describe` runs only when the call is recorded (it may query the driver).
template <typename Describe, typename CallReal>
CUresult traced_copy(Api api, bool per_thread, bool async, CUstream stream, Describe&& describe,
                     CallReal&& call_real) {
  ReentrancyGuard guard;
  if (!guard.outermost() || !cuda_domain_recording()) return call_real();
  const CopyShape shape = describe();
  StreamOperation operation(api, Operation::kCopy, per_thread, async, stream);
  const CUresult result = call_real();
  if (auto* record = emit<format::MemoryCopyRecord>()) {
    operation.finish(*record, result);
    record->bytes = shape.bytes;
    record->src = shape.src;
    record->dst = shape.dst;
    record->direction = static_cast<uint8_t>(shape.direction);
    record->src_kind = static_cast<uint8_t>(shape.src_kind);
    record->dst_kind = static_cast<uint8_t>(shape.dst_kind);
    record->peer_device = shape.peer_device;
    const uint64_t correlation = record->span.correlation_id;
    commit();
    stacks::attach_stacks(correlation, format::StackPoint::kLaunch);
  }
  operation.submitted(format::GpuActivityKind::kMemoryCopy, result);
  return result;
}

template <typename CallReal>
CUresult traced_set(Api api, bool per_thread, bool async, CUstream stream, CUdeviceptr dst,
                    uint32_t value, uint8_t element_bytes, size_t count, CallReal&& call_real) {
  ReentrancyGuard guard;
  if (!guard.outermost() || !cuda_domain_recording()) return call_real();
  StreamOperation operation(api, Operation::kSet, per_thread, async, stream);
  const CUresult result = call_real();
  if (auto* record = emit<format::MemorySetRecord>()) {
    operation.finish(*record, result);
    record->bytes = static_cast<uint64_t>(count) * element_bytes;
    record->dst = dst;
    record->value = value;
    record->element_bytes = element_bytes;
    record->dst_kind = static_cast<uint8_t>(MemoryKind::kDevice);
    const uint64_t correlation = record->span.correlation_id;
    commit();
    stacks::attach_stacks(correlation, format::StackPoint::kLaunch);
  }
  operation.submitted(format::GpuActivityKind::kMemorySet, result);
  return result;
}

CopyShape unified(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  const MemoryKind src_kind = any_memory_kind(src);
  const MemoryKind dst_kind = any_memory_kind(dst);
  return {direction_between(src_kind, dst_kind), src, dst, bytes, src_kind, dst_kind, -1};
}

CopyShape host_to_device(CUdeviceptr dst, const void* src, size_t bytes) {
  return {CopyDirection::kHostToDevice, reinterpret_cast<uint64_t>(src), dst, bytes,
          host_memory_kind(src), MemoryKind::kDevice, -1};
}

CopyShape device_to_host(void* dst, CUdeviceptr src, size_t bytes) {
  return {CopyDirection::kDeviceToHost, src, reinterpret_cast<uint64_t>(dst), bytes,
          MemoryKind::kDevice, host_memory_kind(dst), -1};
}

CopyShape device_to_device(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  return {CopyDirection::kDeviceToDevice, src, dst, bytes, MemoryKind::kDevice, MemoryKind::kDevice, -1};
}

// The device of the source context of a peer copy, when the driver can say
// (cuCtxGetDevice_v2 takes an explicit context; older drivers cannot).
int32_t device_of_context(CUcontext context) {
  using GetDevice = CUresult(CUdevice*, CUcontext);
  static void* slot = nullptr;
  auto* get_device = real_function<GetDevice>(slot, "cuCtxGetDevice_v2", kDriverLibrary);
  CUdevice device = -1;
  if (get_device == nullptr || get_device(&device, context) != CUDA_SUCCESS) return -1;
  return device;
}

CopyShape peer(CUdeviceptr dst, CUdeviceptr src, CUcontext src_context, size_t bytes) {
  return {CopyDirection::kPeer, src, dst, bytes, MemoryKind::kDevice, MemoryKind::kDevice,
          device_of_context(src_context)};
}

#define PROFLAUNCH_CHOOSE(per_thread, base, pt) \
  ((per_thread) ? PROFLAUNCH_REAL(pt, kDriverLibrary) : PROFLAUNCH_REAL(base, kDriverLibrary))

}  // namespace

// ---- the family entry points, one per API; wrappers below pick the variant

CUresult memcpy_unified(bool pt, CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  auto* real = PROFLAUNCH_CHOOSE(pt, cuMemcpy, cuMemcpy_ptds);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_copy(Api::cuMemcpy, pt, false, nullptr, [&] { return unified(dst, src, bytes); },
                     [&] { return real(dst, src, bytes); });
}

CUresult memcpy_unified_async(bool pt, CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s) {
  auto* real = PROFLAUNCH_CHOOSE(pt, cuMemcpyAsync, cuMemcpyAsync_ptsz);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_copy(Api::cuMemcpyAsync, pt, true, s, [&] { return unified(dst, src, bytes); },
                     [&] { return real(dst, src, bytes, s); });
}

CUresult memcpy_htod(bool pt, CUdeviceptr dst, const void* src, size_t bytes) {
  auto* real = PROFLAUNCH_CHOOSE(pt, cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_copy(Api::cuMemcpyHtoD, pt, false, nullptr,
                     [&] { return host_to_device(dst, src, bytes); }, [&] { return real(dst, src, bytes); });
}

CUresult memcpy_dtoh(bool pt, void* dst, CUdeviceptr src, size_t bytes) {
  auto* real = PROFLAUNCH_CHOOSE(pt, cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_copy(Api::cuMemcpyDtoH, pt, false, nullptr,
                     [&] { return device_to_host(dst, src, bytes); }, [&] { return real(dst, src, bytes); });
}

CUresult memcpy_dtod(bool pt, CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  auto* real = PROFLAUNCH_CHOOSE(pt, cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_copy(Api::cuMemcpyDtoD, pt, false, nullptr,
                     [&] { return device_to_device(dst, src, bytes); }, [&] { return real(dst, src, bytes); });
}

CUresult memcpy_htod_async(bool pt, CUdeviceptr dst, const void* src, size_t bytes, CUstream s) {
  auto* real = PROFLAUNCH_CHOOSE(pt, cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_copy(Api::cuMemcpyHtoDAsync, pt, true, s,
                     [&] { return host_to_device(dst, src, bytes); }, [&] { return real(dst, src, bytes, s); });
}

CUresult memcpy_dtoh_async(bool pt, void* dst, CUdeviceptr src, size_t bytes, CUstream s) {
  auto* real = PROFLAUNCH_CHOOSE(pt, cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_copy(Api::cuMemcpyDtoHAsync, pt, true, s,
                     [&] { return device_to_host(dst, src, bytes); }, [&] { return real(dst, src, bytes, s); });
}

CUresult memcpy_dtod_async(bool pt, CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s) {
  auto* real = PROFLAUNCH_CHOOSE(pt, cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_copy(Api::cuMemcpyDtoDAsync, pt, true, s,
                     [&] { return device_to_device(dst, src, bytes); }, [&] { return real(dst, src, bytes, s); });
}

CUresult memcpy_peer(bool pt, CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                     size_t bytes) {
  auto* real = PROFLAUNCH_CHOOSE(pt, cuMemcpyPeer, cuMemcpyPeer_ptds);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_copy(Api::cuMemcpyPeer, pt, false, nullptr, [&] { return peer(dst, src, src_ctx, bytes); },
                     [&] { return real(dst, dst_ctx, src, src_ctx, bytes); });
}

CUresult memcpy_peer_async(bool pt, CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,
                           CUcontext src_ctx, size_t bytes, CUstream s) {
  auto* real = PROFLAUNCH_CHOOSE(pt, cuMemcpyPeerAsync, cuMemcpyPeerAsync_ptsz);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_copy(Api::cuMemcpyPeerAsync, pt, true, s, [&] { return peer(dst, src, src_ctx, bytes); },
                     [&] { return real(dst, dst_ctx, src, src_ctx, bytes, s); });
}

CUresult memset_d8(bool pt, CUdeviceptr dst, unsigned char v, size_t n) {
  auto* real = PROFLAUNCH_CHOOSE(pt, cuMemsetD8_v2, cuMemsetD8_v2_ptds);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_set(Api::cuMemsetD8, pt, false, nullptr, dst, v, 1, n, [&] { return real(dst, v, n); });
}

CUresult memset_d16(bool pt, CUdeviceptr dst, unsigned short v, size_t n) {
  auto* real = PROFLAUNCH_CHOOSE(pt, cuMemsetD16_v2, cuMemsetD16_v2_ptds);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_set(Api::cuMemsetD16, pt, false, nullptr, dst, v, 2, n, [&] { return real(dst, v, n); });
}

CUresult memset_d32(bool pt, CUdeviceptr dst, unsigned int v, size_t n) {
  auto* real = PROFLAUNCH_CHOOSE(pt, cuMemsetD32_v2, cuMemsetD32_v2_ptds);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_set(Api::cuMemsetD32, pt, false, nullptr, dst, v, 4, n, [&] { return real(dst, v, n); });
}

CUresult memset_d8_async(bool pt, CUdeviceptr dst, unsigned char v, size_t n, CUstream s) {
  auto* real = PROFLAUNCH_CHOOSE(pt, cuMemsetD8Async, cuMemsetD8Async_ptsz);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_set(Api::cuMemsetD8Async, pt, true, s, dst, v, 1, n, [&] { return real(dst, v, n, s); });
}

CUresult memset_d16_async(bool pt, CUdeviceptr dst, unsigned short v, size_t n, CUstream s) {
  auto* real = PROFLAUNCH_CHOOSE(pt, cuMemsetD16Async, cuMemsetD16Async_ptsz);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_set(Api::cuMemsetD16Async, pt, true, s, dst, v, 2, n, [&] { return real(dst, v, n, s); });
}

CUresult memset_d32_async(bool pt, CUdeviceptr dst, unsigned int v, size_t n, CUstream s) {
  auto* real = PROFLAUNCH_CHOOSE(pt, cuMemsetD32Async, cuMemsetD32Async_ptsz);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_set(Api::cuMemsetD32Async, pt, true, s, dst, v, 4, n, [&] { return real(dst, v, n, s); });
}

}  // namespace proflaunch::cuda

namespace pc = proflaunch::cuda;

extern "C" {

// clang-format off
PROFLAUNCH_EXPORT CUresult cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n) { return pc::memcpy_unified(false, d, s, n); }
PROFLAUNCH_EXPORT CUresult cuMemcpy_ptds(CUdeviceptr d, CUdeviceptr s, size_t n) { return pc::memcpy_unified(true, d, s, n); }
PROFLAUNCH_EXPORT CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { return pc::memcpy_unified_async(false, d, s, n, st); }
PROFLAUNCH_EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { return pc::memcpy_unified_async(true, d, s, n, st); }
PROFLAUNCH_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void* s, size_t n) { return pc::memcpy_htod(false, d, s, n); }
PROFLAUNCH_EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr d, const void* s, size_t n) { return pc::memcpy_htod(true, d, s, n); }
PROFLAUNCH_EXPORT CUresult cuMemcpyDtoH_v2(void* d, CUdeviceptr s, size_t n) { return pc::memcpy_dtoh(false, d, s, n); }
PROFLAUNCH_EXPORT CUresult cuMemcpyDtoH_v2_ptds(void* d, CUdeviceptr s, size_t n) { return pc::memcpy_dtoh(true, d, s, n); }
PROFLAUNCH_EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) { return pc::memcpy_dtod(false, d, s, n); }
PROFLAUNCH_EXPORT CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr d, CUdeviceptr s, size_t n) { return pc::memcpy_dtod(true, d, s, n); }
PROFLAUNCH_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void* s, size_t n, CUstream st) { return pc::memcpy_htod_async(false, d, s, n, st); }
PROFLAUNCH_EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr d, const void* s, size_t n, CUstream st) { return pc::memcpy_htod_async(true, d, s, n, st); }
PROFLAUNCH_EXPORT CUresult cuMemcpyDtoHAsync_v2(void* d, CUdeviceptr s, size_t n, CUstream st) { return pc::memcpy_dtoh_async(false, d, s, n, st); }
PROFLAUNCH_EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void* d, CUdeviceptr s, size_t n, CUstream st) { return pc::memcpy_dtoh_async(true, d, s, n, st); }
PROFLAUNCH_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { return pc::memcpy_dtod_async(false, d, s, n, st); }
PROFLAUNCH_EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { return pc::memcpy_dtod_async(true, d, s, n, st); }
PROFLAUNCH_EXPORT CUresult cuMemcpyPeer(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n) { return pc::memcpy_peer(false, d, dc, s, sc, n); }
PROFLAUNCH_EXPORT CUresult cuMemcpyPeer_ptds(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n) { return pc::memcpy_peer(true, d, dc, s, sc, n); }
PROFLAUNCH_EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st) { return pc::memcpy_peer_async(false, d, dc, s, sc, n, st); }
PROFLAUNCH_EXPORT CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st) { return pc::memcpy_peer_async(true, d, dc, s, sc, n, st); }
PROFLAUNCH_EXPORT CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { return pc::memset_d8(false, d, v, n); }
PROFLAUNCH_EXPORT CUresult cuMemsetD8_v2_ptds(CUdeviceptr d, unsigned char v, size_t n) { return pc::memset_d8(true, d, v, n); }
PROFLAUNCH_EXPORT CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n) { return pc::memset_d16(false, d, v, n); }
PROFLAUNCH_EXPORT CUresult cuMemsetD16_v2_ptds(CUdeviceptr d, unsigned short v, size_t n) { return pc::memset_d16(true, d, v, n); }
PROFLAUNCH_EXPORT CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n) { return pc::memset_d32(false, d, v, n); }
PROFLAUNCH_EXPORT CUresult cuMemsetD32_v2_ptds(CUdeviceptr d, unsigned int v, size_t n) { return pc::memset_d32(true, d, v, n); }
PROFLAUNCH_EXPORT CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream st) { return pc::memset_d8_async(false, d, v, n, st); }
PROFLAUNCH_EXPORT CUresult cuMemsetD8Async_ptsz(CUdeviceptr d, unsigned char v, size_t n, CUstream st) { return pc::memset_d8_async(true, d, v, n, st); }
PROFLAUNCH_EXPORT CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream st) { return pc::memset_d16_async(false, d, v, n, st); }
PROFLAUNCH_EXPORT CUresult cuMemsetD16Async_ptsz(CUdeviceptr d, unsigned short v, size_t n, CUstream st) { return pc::memset_d16_async(true, d, v, n, st); }
PROFLAUNCH_EXPORT CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream st) { return pc::memset_d32_async(false, d, v, n, st); }
PROFLAUNCH_EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int v, size_t n, CUstream st) { return pc::memset_d32_async(true, d, v, n, st); }
// clang-format on

}  // extern "C"

namespace proflaunch::cuda {

HookFamily copy_hooks() {
  // clang-format off
  static const intercept::HookEntry kHooks[] = {
      PROFLAUNCH_HOOK(cuMemcpy, "cuMemcpy", 4000, false, kDriverLibrary, real_cuMemcpy),
      PROFLAUNCH_HOOK(cuMemcpy_ptds, "cuMemcpy", 7000, true, kDriverLibrary, real_cuMemcpy_ptds),
      PROFLAUNCH_HOOK(cuMemcpyAsync, "cuMemcpyAsync", 4000, false, kDriverLibrary, real_cuMemcpyAsync),
      PROFLAUNCH_HOOK(cuMemcpyAsync_ptsz, "cuMemcpyAsync", 7000, true, kDriverLibrary, real_cuMemcpyAsync_ptsz),
      PROFLAUNCH_HOOK(cuMemcpyHtoD_v2, "cuMemcpyHtoD", 3020, false, kDriverLibrary, real_cuMemcpyHtoD_v2),
      PROFLAUNCH_HOOK(cuMemcpyHtoD_v2_ptds, "cuMemcpyHtoD", 7000, true, kDriverLibrary, real_cuMemcpyHtoD_v2_ptds),
      PROFLAUNCH_HOOK(cuMemcpyDtoH_v2, "cuMemcpyDtoH", 3020, false, kDriverLibrary, real_cuMemcpyDtoH_v2),
      PROFLAUNCH_HOOK(cuMemcpyDtoH_v2_ptds, "cuMemcpyDtoH", 7000, true, kDriverLibrary, real_cuMemcpyDtoH_v2_ptds),
      PROFLAUNCH_HOOK(cuMemcpyDtoD_v2, "cuMemcpyDtoD", 3020, false, kDriverLibrary, real_cuMemcpyDtoD_v2),
      PROFLAUNCH_HOOK(cuMemcpyDtoD_v2_ptds, "cuMemcpyDtoD", 7000, true, kDriverLibrary, real_cuMemcpyDtoD_v2_ptds),
      PROFLAUNCH_HOOK(cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync", 3020, false, kDriverLibrary, real_cuMemcpyHtoDAsync_v2),
      PROFLAUNCH_HOOK(cuMemcpyHtoDAsync_v2_ptsz, "cuMemcpyHtoDAsync", 7000, true, kDriverLibrary, real_cuMemcpyHtoDAsync_v2_ptsz),
      PROFLAUNCH_HOOK(cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync", 3020, false, kDriverLibrary, real_cuMemcpyDtoHAsync_v2),
      PROFLAUNCH_HOOK(cuMemcpyDtoHAsync_v2_ptsz, "cuMemcpyDtoHAsync", 7000, true, kDriverLibrary, real_cuMemcpyDtoHAsync_v2_ptsz),
      PROFLAUNCH_HOOK(cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync", 3020, false, kDriverLibrary, real_cuMemcpyDtoDAsync_v2),
      PROFLAUNCH_HOOK(cuMemcpyDtoDAsync_v2_ptsz, "cuMemcpyDtoDAsync", 7000, true, kDriverLibrary, real_cuMemcpyDtoDAsync_v2_ptsz),
      PROFLAUNCH_HOOK(cuMemcpyPeer, "cuMemcpyPeer", 4000, false, kDriverLibrary, real_cuMemcpyPeer),
      PROFLAUNCH_HOOK(cuMemcpyPeer_ptds, "cuMemcpyPeer", 7000, true, kDriverLibrary, real_cuMemcpyPeer_ptds),
      PROFLAUNCH_HOOK(cuMemcpyPeerAsync, "cuMemcpyPeerAsync", 4000, false, kDriverLibrary, real_cuMemcpyPeerAsync),
      PROFLAUNCH_HOOK(cuMemcpyPeerAsync_ptsz, "cuMemcpyPeerAsync", 7000, true, kDriverLibrary, real_cuMemcpyPeerAsync_ptsz),
      PROFLAUNCH_HOOK(cuMemsetD8_v2, "cuMemsetD8", 3020, false, kDriverLibrary, real_cuMemsetD8_v2),
      PROFLAUNCH_HOOK(cuMemsetD8_v2_ptds, "cuMemsetD8", 7000, true, kDriverLibrary, real_cuMemsetD8_v2_ptds),
      PROFLAUNCH_HOOK(cuMemsetD16_v2, "cuMemsetD16", 3020, false, kDriverLibrary, real_cuMemsetD16_v2),
      PROFLAUNCH_HOOK(cuMemsetD16_v2_ptds, "cuMemsetD16", 7000, true, kDriverLibrary, real_cuMemsetD16_v2_ptds),
      PROFLAUNCH_HOOK(cuMemsetD32_v2, "cuMemsetD32", 3020, false, kDriverLibrary, real_cuMemsetD32_v2),
      PROFLAUNCH_HOOK(cuMemsetD32_v2_ptds, "cuMemsetD32", 7000, true, kDriverLibrary, real_cuMemsetD32_v2_ptds),
      PROFLAUNCH_HOOK(cuMemsetD8Async, "cuMemsetD8Async", 3020, false, kDriverLibrary, real_cuMemsetD8Async),
      PROFLAUNCH_HOOK(cuMemsetD8Async_ptsz, "cuMemsetD8Async", 7000, true, kDriverLibrary, real_cuMemsetD8Async_ptsz),
      PROFLAUNCH_HOOK(cuMemsetD16Async, "cuMemsetD16Async", 3020, false, kDriverLibrary, real_cuMemsetD16Async),
      PROFLAUNCH_HOOK(cuMemsetD16Async_ptsz, "cuMemsetD16Async", 7000, true, kDriverLibrary, real_cuMemsetD16Async_ptsz),
      PROFLAUNCH_HOOK(cuMemsetD32Async, "cuMemsetD32Async", 3020, false, kDriverLibrary, real_cuMemsetD32Async),
      PROFLAUNCH_HOOK(cuMemsetD32Async_ptsz, "cuMemsetD32Async", 7000, true, kDriverLibrary, real_cuMemsetD32Async_ptsz),
  };
  // clang-format on
  return {kHooks, std::size(kHooks)};
}

}  // namespace proflaunch::cuda
