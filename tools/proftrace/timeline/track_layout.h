// Where every event goes on the timeline: one process per traced process
// (pid = its real pid), its threads by tid; one GPU process per (host,
// device) with a synthetic pid above the Linux pid range, and in it one track
// per (traced process, stream). Declares each process and track to the sink
// (name and sort order) as it comes into use.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "tools/proftrace/timeline/stream_lanes.h"
#include "tools/proftrace/timeline/string_table.h"
#include "tools/proftrace/timeline/time_math.h"
#include "tools/proftrace/timeline/timeline_events.h"
#include "tools/proftrace/interpret/clock_alignment.h"
#include "tools/proftrace/interpret/host_function_names.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools::timeline {

// Linux pids and tids are below 2^22 (PID_MAX_LIMIT on 64-bit).
inline constexpr uint32_t kLinuxPidLimit = 1u << 22;
// Processes whose real pid is already taken by a process on another host.
inline constexpr uint32_t kRemappedPidBase = 500'000'000;
// GPU processes: kGpuPidBase + index, far above any Linux pid and below 2^32.
inline constexpr uint32_t kGpuPidBase = 1'000'000'000;

// Relates each section's CLOCK_MONOTONIC timestamps to the common timeline:
// 0 on one host; across hosts the per-host offsets of clock_alignment.h
// (REALTIME snapshots refined by collective ends).
class ClockAlignment {
 public:
  explicit ClockAlignment(const HostClockOffsets* offsets) : offsets_(offsets) {}
  int64_t offset_ns(const SectionModel& section) const {
    return offsets_ != nullptr ? offsets_->offset_ns(section.host()) : 0;
  }

 private:
  const HostClockOffsets* offsets_;
};

struct GpuProcess;

// The stream key of work on a stream only the timing backend knows (its own
// stream id in the low bits): no stream handle has the top bit set.
inline constexpr uint64_t kStreamOfBackend = uint64_t{1} << 63;
// Stream ids of our own (SectionContext::stream_id) start above this. The
// driver's ids (cuStreamGetId, CUPTI's streamId) are small counters in
// practice; the range is not documented, so ours keep well clear of them.
inline constexpr uint64_t kSyntheticStreamIdBase = uint64_t{1} << 32;

// Everything the converter needs per section, looked up once per chunk.
struct SectionContext {
  const SectionModel* model = nullptr;
  uint32_t pid = 0;           // timeline pid of the traced process
  int64_t offset_ns = 0;      // added to timestamps before subtracting the base
  uint32_t display_order = 0;  // position among sections, for sort indices
  StringTable* strings = nullptr;
  interpret::HostFunctionNames* host_functions = nullptr;  // the layout's, shared by every section
  // Caches of interned names.
  struct ApiLabel {
    Str name;
    Str category;  // "driver", "runtime", ... from ApiDef.domain
  };
  std::unordered_map<uint16_t, ApiLabel> api_labels;
  std::unordered_map<uint64_t, std::vector<Str>> kernel_names;  // per FunctionDef version
  std::unordered_map<uint64_t, Str> host_function_names;        // by address
  // The last kernels looked up (twice per launch: its call and its GPU
  // work), by handle, so that most launches skip both maps.
  struct KernelNameCacheEntry {
    uint64_t handle = 0;
    const std::vector<format::FunctionDefRecord>* versions = nullptr;
    const std::vector<Str>* names = nullptr;  // nullptr: empty entry
  };
  static constexpr unsigned kKernelNameCacheBits = 8;
  std::vector<KernelNameCacheEntry> kernel_name_cache;
  // Streams: the driver's id (ObjectLifecycle) or a number in order of use.
  std::unordered_map<uint64_t, uint64_t> stream_ids;
  std::unordered_map<uint64_t, uint64_t> stream_numbers;
  std::map<int32_t, GpuProcess*> gpu_by_device;
  std::unordered_map<uint64_t, Str> stream_texts;  // display text per handle
  // Executable graphs (GraphNode records at instantiation): their nodes and
  // the first kernels, for the args of each launch.
  struct GraphSummary {
    uint32_t nodes = 0;
    uint32_t kernels = 0;
    std::vector<uint64_t> first_kernels;  // function handles, at most kMaxListedKernels
    uint64_t defined_ns = 0;              // when instantiated (names resolve as of then)
    bool instantiated = false;            // its GraphExec record was read: a new node starts over
  };
  static constexpr size_t kMaxListedKernels = 16;
  std::unordered_map<uint64_t, GraphSummary> graphs;
  // Open captures per (thread, stream): the begin's end time, mode, id.
  struct OpenCapture {
    uint64_t begun_ns;
    uint8_t mode;
  };
  std::map<std::pair<uint32_t, uint64_t>, OpenCapture> open_captures;

  // "legacy default", "per-thread default", the driver's id, or the handle.
  Str stream_text(uint64_t stream);
  // The "stream" of GPU work, an integer > 0 as Kineto writes CUPTI's
  // streamId: the driver's id from the stream's creation record, else one of
  // our own from kSyntheticStreamIdBase + 1 in order of first use (default
  // streams have no creation record). Fixed at first use, so one stream keeps
  // one number. Per-thread default streams are one per launching thread.
  uint64_t stream_id(uint64_t stream, uint32_t launching_tid);
  std::map<std::pair<uint64_t, uint32_t>, uint64_t> kineto_stream_ids;

  const ApiLabel& api_label(uint16_t api);
  Str kernel_name(uint64_t handle, uint64_t at_ns);
  // A host function's name (interpret/host_function_names.h), by the address
  // its KernelLaunch holds; the first call's time picks a FunctionDef
  // fallback for all.
  Str host_function_name(uint64_t address, uint64_t at_ns);
};



// Where one piece of GPU work goes, and its times after lane placement.
struct GpuPlacement {
  uint32_t pid;
  uint32_t tid;
  int64_t start_ns;  // timeline ns
  int64_t end_ns;
  int64_t adjusted_ns;  // start moved by this much to keep slices nested
};

struct GpuProcess {
  uint32_t pid;
  std::string name;
  // (section, stream handle, launching tid for per-thread default streams,
  // graph replays: their own track beside the stream's)
  std::map<std::tuple<uint64_t, uint64_t, uint32_t, bool>, StreamLanes> streams;
  uint32_t next_tid = 1;  // tid 0 would become the pid in the importer
};

class TrackLayout {
 public:
  // `offsets`: per-host clock offsets (null: one host, no offsets).
  TrackLayout(const TraceModel& model, TimelineSink& out, StringTable& strings,
              const HostClockOffsets* offsets = nullptr);

  // The start of the timeline: the earliest section start.
  int64_t base_ns() const { return base_ns_; }
  int64_t timeline_ns(const SectionContext& section, uint64_t ns) const {
    return shift_ns(ns, section.offset_ns, base_ns_);
  }

  // Context of a section; sections without definitions get one too (events
  // of a section whose definitions chunk was lost still convert).
  SectionContext& section(uint64_t section_id);

  // Declares every traced process and its threads.
  void write_host_metadata();

  StringTable& strings() { return strings_; }
  TimelineSink& sink() { return out_; }

  // The thread track for a host event: tid 0 (no ThreadBatch) maps to the
  // process's main track.
  uint32_t host_tid(const SectionContext& section, uint32_t tid) const {
    return tid != 0 ? tid : section.pid;
  }

  // Places GPU work [start_ns, end_ns] (timeline ns) on its stream's track,
  // naming tracks as they come into use. `graph_replays`: on the stream's
  // "graph replays" track instead (the replays of graphs timed node by node,
  // whose nodes are on the stream's own track).
  GpuPlacement place_gpu_work(SectionContext& section, int32_t device, uint64_t stream,
                              uint32_t launching_tid, int64_t start_ns, int64_t end_ns,
                              bool graph_replays = false, bool start_is_bound = false);

  // The track of a thread's NVTX ranges in one domain, next to the thread:
  // named "NVTX <domain>: <thread>" when it first comes into use.
  uint32_t nvtx_track(SectionContext& section, uint32_t tid, uint64_t domain);

  // The "NVTX GPU ranges" track of a host thread's ranges in a device's GPU
  // process (nsys's NVTX projection): named when it first comes into use.
  GpuPlacement nvtx_gpu_track(SectionContext& section, int32_t device, uint32_t tid);

  // The "CUDA syncs" track of a host thread's synchronizations in a device's
  // GPU process (Kineto's cuda_sync events): named when it first comes into use.
  GpuPlacement sync_track(SectionContext& section, int32_t device, uint32_t tid);
  // The track of the steps found (one thread's), next to that thread: named
  // "Steps: <thread>" when first used.
  uint32_t steps_track(SectionContext& section, uint32_t tid);
  // The "Capture windows" track of a process, at its top.
  uint32_t capture_track(SectionContext& section);

  // From an ObjectLifecycle stream creation: names the stream's track.
  void note_stream_id(SectionContext& section, uint64_t handle, uint64_t id);

  size_t gpu_process_count() const { return gpu_processes_.size(); }

  // The timeline pid of a device's GPU process (declared when first used):
  // the same process for every section that has the device's UUID, the
  // device sampler's included (gpu_metric_counters.h).
  uint32_t gpu_process_pid(SectionContext& section, int32_t device) { return gpu_process(section, device).pid; }

 private:
  GpuProcess& gpu_process(SectionContext& section, int32_t device);
  // A track of one host thread's events in a device's GPU process, named
  // `prefix` + the thread when it first comes into use.
  GpuPlacement thread_track_in_gpu(std::map<std::tuple<int32_t, uint64_t, uint32_t>, GpuPlacement>& tracks,
                                   const char* prefix, SectionContext& section, int32_t device, uint32_t tid);
  std::string stream_track_name(SectionContext& section, uint64_t stream, uint32_t launching_tid);
  void declare_process(uint32_t pid, const std::string& name, int64_t sort_index);
  void declare_track(uint32_t pid, uint32_t tid, const std::string& name, int64_t sort_index,
                     ThreadKind kind = ThreadKind::kTrack);

  const TraceModel& model_;
  TimelineSink& out_;
  StringTable& strings_;
  interpret::HostFunctionNames host_functions_;
  ClockAlignment clocks_;
  int64_t base_ns_ = 0;
  std::unordered_map<uint64_t, std::unique_ptr<SectionContext>> sections_;
  // (host, device identity) -> GPU process
  std::map<std::pair<std::string, std::string>, std::unique_ptr<GpuProcess>> gpu_processes_;
  uint32_t next_remapped_pid_ = kRemappedPidBase;
  // NVTX tracks: (section, tid, domain) -> timeline tid, from kNvtxTidBase up.
  std::map<std::tuple<uint64_t, uint32_t, uint64_t>, uint32_t> nvtx_tracks_;
  std::map<std::tuple<int32_t, uint64_t, uint32_t>, GpuPlacement> nvtx_gpu_tracks_;
  std::map<std::tuple<int32_t, uint64_t, uint32_t>, GpuPlacement> sync_tracks_;
  std::map<uint64_t, uint32_t> capture_tracks_;  // section -> timeline tid
  uint32_t steps_tid_ = 0;
  uint32_t next_nvtx_tid_ = kNvtxTidBase;
  static constexpr uint32_t kNvtxTidBase = 0x40000000;
};

}  // namespace proflaunch::tools::timeline
