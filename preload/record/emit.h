// The interface hooks record through. Everything a hook needs is here:
//
//   #include "preload/record/emit.h"
//
//   CUresult cuLaunchKernel(...) {
//     proflaunch::ReentrancyGuard guard;
//     if (!guard.outermost()) return real_cuLaunchKernel(...);
//     const uint64_t begin = proflaunch::now_ticks();
//     const CUresult result = real_cuLaunchKernel(...);
//     if (auto* record = proflaunch::emit<format::KernelLaunchRecord>()) {
//       record->span.begin_ns = begin;   // spans hold ticks in the ring (clock.h)
//       record->span.end_ns = proflaunch::now_ticks();
//       ...
//       proflaunch::commit();
//     }
//     return result;
//   }
//
// Rules (the hot path takes no lock, makes no syscall and never allocates):
//  - emit<T>() returns a zeroed slot with its header set, directly in the
//    thread's ring, or nullptr (not recording, or the ring is full: the record
//    is then counted as dropped and reported by a LOST record).
//  - commit() publishes it. Between the two, call nothing that may record:
//    emit after the real function returned, never around it. A second emit()
//    before commit() abandons the first slot.
//  - Names and other strings go through the definitions API once per handle
//    (intern_string, define_api, define_function): cold path, takes a mutex.
//  - Not from signal handlers: a handler interrupting a hook between emit()
//    and commit() on the same thread would overwrite its slot.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "formats/records.h"
#include "preload/base/clock.h"
#include "preload/base/guard.h"
#include "preload/config.h"
#include "preload/record/definitions.h"
#include "preload/record/thread_registry.h"
#include "preload/state/runtime_state.h"

namespace proflaunch {

template <typename Record>
inline Record* emit() noexcept {
  static_assert(std::is_trivially_copyable_v<Record>);
  static_assert(sizeof(Record) <= kMaxEventRecordBytes);
  ThreadBuffer* buffer = tls_thread_buffer;
  if (__builtin_expect(buffer == nullptr, 0)) {
    buffer = attach_current_thread();
    if (buffer == nullptr) return nullptr;
  }
  void* slot = buffer->reserve(sizeof(Record));
  if (__builtin_expect(slot == nullptr, 0)) return nullptr;
  std::memset(slot, 0, sizeof(Record));
  auto* record = static_cast<Record*>(slot);
  record->header = format::header_for<Record>();
  return record;
}

// A record with a variable tail of `tail_bytes` after its fixed part (for
// kinds that declare one). The header's `bytes` covers both.
template <typename Record>
inline Record* emit_with_tail(uint32_t tail_bytes) noexcept {
  const uint32_t total = static_cast<uint32_t>(sizeof(Record)) + tail_bytes;
  if (total > kMaxEventRecordBytes) return nullptr;
  ThreadBuffer* buffer = tls_thread_buffer;
  if (__builtin_expect(buffer == nullptr, 0)) {
    buffer = attach_current_thread();
    if (buffer == nullptr) return nullptr;
  }
  void* slot = buffer->reserve(total);
  if (slot == nullptr) return nullptr;
  std::memset(slot, 0, total);
  auto* record = static_cast<Record*>(slot);
  record->header = format::header_for<Record>();
  record->header.bytes = static_cast<uint16_t>(total);
  return record;
}

// A record of a kind that grew, written at an earlier version's size
// (`bytes` < sizeof(Record)): the caller writes only the fields within it.
template <typename Record>
inline Record* emit_short(uint16_t bytes) noexcept {
  static_assert(std::is_trivially_copyable_v<Record>);
  ThreadBuffer* buffer = tls_thread_buffer;
  if (__builtin_expect(buffer == nullptr, 0)) {
    buffer = attach_current_thread();
    if (buffer == nullptr) return nullptr;
  }
  void* slot = buffer->reserve(bytes);
  if (__builtin_expect(slot == nullptr, 0)) return nullptr;
  std::memset(slot, 0, bytes);
  auto* record = static_cast<Record*>(slot);
  record->header = format::header_for<Record>();
  record->header.bytes = bytes;
  return record;
}

// An ApiCall of a call that is not an event record: its span only (the
// first version's 40 bytes; hooks write nothing after `span`).
inline format::ApiCallRecord* emit_api_call() noexcept {
  return emit_short<format::ApiCallRecord>(format::kApiCallPlainBytes);
}

// Publishes the record returned by the last emit on this thread.
inline void commit() noexcept { tls_thread_buffer->commit(); }

// A correlation id (ApiSpan::correlation_id) unique within the process, and
// so within its section: the thread's slot in the high 24 bits, a per-thread
// sequence in the low 40. No shared counter, so no cache line bouncing
// between recording threads. A fork child's threads get new slots.
inline uint64_t next_correlation_id() noexcept {
  uint64_t id = tls_next_correlation_id;
  if (__builtin_expect(id == 0, 0)) id = first_correlation_id_of_thread();
  tls_next_correlation_id = id + 1;
  return id;
}

// The configured trace domains (PROFLAUNCH_TRACE), for hooks to check once.
inline uint32_t trace_domains() noexcept { return runtime::config().trace_domains; }

}  // namespace proflaunch
