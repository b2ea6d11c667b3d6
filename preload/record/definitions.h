// Cold-path definitions: interned strings, API names, device function names,
// threads, devices. They go into Definitions chunks; events refer to them by
// id. Everything here takes a mutex and may allocate, so hooks call it at
// registration time or once per new handle, never per event, and never from
// a signal handler.
//
// Two kinds of content:
//  - the catalog (strings, APIs, functions, devices) is process-wide: a fork
//    child's new section starts by re-writing all of it, so ids handed out
//    before the fork stay valid in the child;
//  - section records (ThreadInfo, SectionEnd) belong to one section only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "formats/records.h"

namespace proflaunch {

// The id of `text` (truncated to kMaxStringBytes), defining it on first use.
// 0 when out of memory.
uint32_t intern_string(std::string_view text) noexcept;

// Names the small integer `api` that event records carry in ApiSpan::api.
// Ids are chosen by the caller (a hook table); defining an id again with the
// same name is a no-op, with another name it is refused (returns false).
bool define_api(uint16_t api, std::string_view name, format::ApiDomain domain,
                format::Vendor vendor) noexcept;

// What the driver says a device function uses (FunctionDefRecord's resource
// fields); `known` is format::FunctionAttributeBits, 0 when nothing is known
// (a host function, or every query failed).
struct FunctionResources {
  uint32_t registers_per_thread = 0;
  uint32_t static_shared_bytes = 0;
  uint32_t max_threads_per_block = 0;
  uint32_t local_bytes_per_thread = 0;
  uint32_t known = 0;
};

// Names a device function handle from now on (a handle may be reused after a
// module unload: define it again with its new name).
bool define_function(uint64_t handle, std::string_view name, const FunctionResources& resources = {}) noexcept;
// Writes `handle`'s current FunctionDef again, same name and since_ns, with
// the resources it uses (false if the handle is not named).
bool define_function_resources(uint64_t handle, const FunctionResources& resources) noexcept;
// Whether `handle` is defined with `name` now (nothing to write again, and
// no reason to ask the driver about its resources again).
bool function_defined_as(uint64_t handle, std::string_view name) noexcept;

struct DeviceDescription {
  int32_t device = 0;
  format::Vendor vendor = format::Vendor::kUnknown;
  std::string_view name;
  uint32_t multiprocessor_count = 0;
  uint64_t total_memory_bytes = 0;
  uint8_t uuid[16] = {};
  // Occupancy limits (DeviceInfoRecord); 0 where the query failed.
  uint32_t max_threads_per_multiprocessor = 0;
  uint32_t max_blocks_per_multiprocessor = 0;
  uint32_t registers_per_multiprocessor = 0;
  uint32_t registers_per_block = 0;
  uint32_t shared_bytes_per_multiprocessor = 0;
  uint32_t shared_bytes_per_block = 0;
  uint32_t shared_bytes_per_block_optin = 0;
  uint32_t reserved_shared_bytes_per_block = 0;
  uint32_t warp_size = 0;
  uint16_t compute_capability_major = 0;
  uint16_t compute_capability_minor = 0;
};
bool define_device(const DeviceDescription& device) noexcept;

// Appends one whole definition record (header included; `bytes` may cover a
// variable tail) to the catalog as it is. For record kinds whose content
// their own subsystem builds (stack and module definitions, preload/stacks).
bool define_record(const void* record, size_t bytes) noexcept;

// A thread's name from `since_ns` on (first record, or a rename).
void define_thread(uint32_t tid, const char* name, uint64_t since_ns) noexcept;

// ---- used by the writer

// Appends the definitions not yet written in this section to `out`: the
// catalog from where the section last stopped, then the section records.
// Returns false when out of memory (nothing taken).
bool take_pending_definitions(std::vector<uint8_t>& out) noexcept;

// A new section starts (fork child, restart after a failed exec): the whole
// catalog is pending again, section records are forgotten.
void definitions_begin_section() noexcept;

// fork
void definitions_lock_before_fork() noexcept;
void definitions_unlock_after_fork() noexcept;

}  // namespace proflaunch
