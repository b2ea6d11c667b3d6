// What a real trace says, as the end-to-end tests ask it: per process image
// (section) its threads, the CUDA operations with their API names and
// resolved kernel names, the GPU activity joined to each operation by
// correlation id, and the host-side calls (synchronizations, lifecycle).
// Built from every record with the formats reader; independent of proftrace.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "formats/reader.h"
#include "formats/records.h"

namespace proflaunch::e2e {

enum class OperationKind { kLaunch, kCopy, kSet };

// A launch, copy or memset as the host issued it, with its GPU side.
struct Operation {
  OperationKind kind = OperationKind::kLaunch;
  uint32_t tid = 0;
  format::ApiSpan span{};
  std::string api;     // ApiDef name: cudaLaunchKernel, cuMemcpyHtoD, ...
  std::string kernel;  // launches: the mangled name of the function, "" if undefined
  int32_t device = 0;
  uint64_t stream = 0;
  uint64_t bytes = 0;  // copies and memsets
  format::KernelLaunchRecord launch{};
  format::MemoryCopyRecord copy{};
  format::MemorySetRecord set{};
  std::vector<format::GpuActivityRecord> gpu;  // joined by correlation id

  bool per_thread_variant() const { return (span.flags & format::kApiPerThreadStream) != 0; }
  bool host_function() const {
    return kind == OperationKind::kLaunch && (launch.launch_flags & format::kLaunchHostFunction) != 0;
  }
  bool via_runtime() const { return (span.flags & format::kApiViaRuntime) != 0; }
};

// Every other host record: ApiCall, Synchronize, ObjectLifecycle.
struct HostCall {
  format::RecordKind kind = format::RecordKind::kApiCall;
  uint32_t tid = 0;
  format::ApiSpan span{};
  std::string api;
  format::SynchronizeRecord sync{};
  format::ObjectLifecycleRecord lifecycle{};
};

// Any record with an ApiSpan (every recorded call), in file order.
struct SpanRecord {
  format::RecordKind kind = format::RecordKind::kApiCall;
  uint32_t tid = 0;
  format::ApiSpan span{};
  std::string api;
};

struct ProcessImage {
  uint64_t section_id = 0;
  std::optional<format::ProcessInfoRecord> info;
  std::map<uint32_t, std::string> strings;
  std::map<uint16_t, format::ApiDefRecord> apis;
  std::map<uint64_t, std::vector<format::FunctionDefRecord>> functions;
  std::map<uint32_t, std::vector<format::ThreadInfoRecord>> thread_infos;
  std::map<int32_t, format::DeviceInfoRecord> devices;
  std::vector<Operation> operations;  // in file order
  std::vector<HostCall> calls;        // in file order
  std::vector<SpanRecord> spans;      // every recorded call, in file order
  std::vector<format::GpuActivityRecord> gpu_activities;  // all, joined or not
  std::vector<format::UnattributedGpuWorkRecord> unattributed;  // work no hooked call submitted
  std::vector<format::LostRecord> lost;
  std::vector<format::CaptureWindowRecord> windows;     // in file order
  std::vector<format::MemoryOperationRecord> memory;    // in file order
  // ApiCount records: calls counted, not recorded, by API name (and thread).
  std::map<std::string, uint64_t> counted_calls;
  std::map<std::pair<uint32_t, std::string>, uint64_t> counted_calls_by_thread;
  struct RawCount {
    uint32_t tid;
    uint16_t api;
    uint64_t count;
    uint64_t first_ns;  // the window the calls fell in
    uint64_t last_ns;
    std::string name;   // the API's
  };
  std::vector<RawCount> raw_counts;
  std::optional<format::SectionEndRecord> end;
  std::vector<uint32_t> event_tids;  // every tid that has a ThreadBatch

  uint32_t pid() const { return info ? info->pid : 0; }
  uint32_t ppid() const { return info ? info->ppid : 0; }
  std::string string(uint32_t id) const;
  std::string command_line() const;  // arguments joined with spaces
  std::string thread_name(uint32_t tid) const;  // latest name, "" if none

  std::vector<const Operation*> launches() const;
  std::vector<const Operation*> copies() const;
  std::vector<const Operation*> sets() const;
  std::vector<const HostCall*> syncs() const;
  // Launches per mangled kernel name.
  std::map<std::string, int> launches_by_kernel() const;
  // Launches of kernels whose mangled name contains `fragment`.
  int launch_count(const std::string& fragment) const;
};

struct CudaTrace {
  std::vector<ProcessImage> images;  // by start time
  format::ReadReport report;

  // Images of `pid`, by start time.
  std::vector<const ProcessImage*> images_of(uint32_t pid) const;
  const ProcessImage* find_section(uint64_t section_id) const;
  size_t operation_count() const;
};

// Reads `path`; on failure `error` says why (and the trace is empty).
CudaTrace load_cuda_trace(const std::string& path, std::string* error);

// The demangled form of a mangled name (itself when it is not mangled).
std::string demangle(const std::string& mangled);

}  // namespace proflaunch::e2e
