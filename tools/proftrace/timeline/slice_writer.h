// Puts each kind of record on the timeline: host API calls as slices on
// their thread, GPU work as slices on its stream's track, flows between the
// two, LOST as process-scoped instants.
//
// Times are placed before anything is written: a slice may be moved to keep
// its track nested, and a flow is only drawn when the GPU work's final start
// is not before its call's final begin (the importer drops such flows).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string_view>
#include <tuple>
#include <string>
#include <unordered_map>
#include <vector>

#include "formats/records.h"
#include "tools/proftrace/interpret/capture_windows.h"
#include "tools/proftrace/interpret/events.h"
#include "tools/proftrace/stats/step_detection.h"
#include "tools/proftrace/timeline/timeline_events.h"
#include "tools/proftrace/timeline/track_layout.h"

namespace proflaunch::tools::timeline {

// An operation of the interpretation pass with its section's timeline context.
struct HostOperation : interpret::Operation {
  HostOperation(const interpret::Operation& op, SectionContext& section_context)
      : interpret::Operation(op), context(&section_context) {}
  SectionContext* context;
};

// GPU work of the pass with its section's timeline context.
struct DeviceActivity : interpret::GpuWork {
  DeviceActivity(const interpret::GpuWork& work, SectionContext& section_context)
      : interpret::GpuWork(work), context(&section_context) {}
  SectionContext* context;
};

// A collective instance as its slices name it: "<comm_id>/<sequence>" (the
// same on every rank), or "group <id>".
std::string instance_label(uint64_t comm_id, uint64_t sequence);
std::string instance_label(const interpret::CollectiveInstance& instance);

struct SliceStats {
  uint64_t api_slices = 0;
  uint64_t gpu_slices = 0;
  uint64_t unattributed_slices = 0;  // of gpu_slices: work no hooked call submitted
  uint64_t flows = 0;
  uint64_t lost_markers = 0;
  uint64_t lost_records = 0;  // sum of LOST counts
  uint64_t negative_durations = 0;       // end before begin: written with dur 0
  uint64_t gpu_overlaps_adjusted = 0;    // start moved to keep one stream's slices nested
  uint64_t api_overlaps_adjusted = 0;    // same on a host thread
  uint64_t flows_dropped_backwards = 0;  // GPU work timed before its call began: no arrow
  uint64_t nvtx_ranges = 0;
  uint64_t nvtx_marks = 0;
  uint64_t nvtx_gpu_ranges = 0;  // GPU projections of NVTX ranges
  uint64_t cpu_samples = 0;
  uint64_t blocking_calls = 0;
};

class SliceWriter {
 public:
  explicit SliceWriter(TrackLayout& layout) : out_(layout.sink()), layout_(layout) {}

  // Whether API slices carry their call stack (a "stack" arg).
  void set_stacks(bool stacks) { stacks_ = stacks; }
  // Kineto's convention for the GPU side of NVTX ranges: on the track of the
  // stream whose work they cover (its consumers match annotations to kernels
  // by pid and tid), rather than on an "NVTX GPU ranges" track. Only for an
  // output whose importer orders slices that begin together by duration (the
  // JSON): in the protobuf an annotation written after its kernels, at the
  // same start, would nest inside the first of them.
  void set_annotations_on_streams(bool on) { annotations_on_streams_ = on; }

  void api_call(SectionContext& section, uint32_t tid, const format::ApiCallRecord& record,
                CallStackRef stack = {});
  void synchronize(SectionContext& section, uint32_t tid, const format::SynchronizeRecord& record,
                   CallStackRef stack = {}, const interpret::EventRecorded* recorded = nullptr);
  void lifecycle(SectionContext& section, uint32_t tid, const format::ObjectLifecycleRecord& record,
                 CallStackRef stack = {});
  // Allocations, frees, VMM calls (failed ones carry their result) and cuMemGetInfo.
  void memory_operation(SectionContext& section, uint32_t tid, const format::MemoryOperationRecord& record,
                        CallStackRef stack = {});
  void memory_info(SectionContext& section, uint32_t tid, const format::MemoryInfoRecord& record,
                   CallStackRef stack = {});
  void lost(SectionContext& section, uint32_t tid, const format::LostRecord& record);
  // NCCL calls (collective_slices.cpp). A collective's slice, and its
  // kernel's GPU slice, carry `collective`: "<comm_id>/<sequence>", the
  // same on every rank, so one search finds the instance on every rank.
  void collective(SectionContext& section, uint32_t tid, const format::CollectiveRecord& record,
                  CallStackRef stack);
  void collective_comm(SectionContext& section, uint32_t tid, const format::CollectiveCommRecord& record,
                       CallStackRef stack);
  void collective_group(SectionContext& section, uint32_t tid, const format::CollectiveGroupRecord& record,
                        CallStackRef stack);

  // CUDA graphs and stream capture. A GraphNode only feeds the summary of
  // its executable graph (the args of its launches); capture begin and end
  // are API slices, and the capture between them a slice of its own.
  void graph_node(SectionContext& section, const format::GraphNodeRecord& record);
  void graph_exec(SectionContext& section, uint32_t tid, const format::GraphExecRecord& record,
                  CallStackRef stack = {});
  void stream_capture(SectionContext& section, uint32_t tid, const format::StreamCaptureRecord& record,
                      CallStackRef stack = {});

  // NVTX (nvtx_slices.cpp): a push/pop range is an X slice on its thread's
  // NVTX track of its domain (TrackLayout::nvtx_track), a start/end range an
  // async slice of its process (they may cross threads), a mark an instant.
  void nvtx_event(SectionContext& section, uint32_t tid, const format::NvtxEventRecord& record,
                  std::string_view inline_message);
  // Capture windows (capture_windows.h): one slice each on its process's
  // "Capture windows" track.
  void capture_windows(TrackLayout& layout, const std::vector<CaptureWindow>& windows);
  // A launch, copy, memset or graph launch read while NVTX ranges are open
  // on its thread: those ranges wait for its GPU time (their projection).
  void nvtx_note_operation(SectionContext& section, uint32_t tid, const format::ApiSpan& span);
  // Ranges still open when the input ended (the program exited or died
  // inside them): written up to their section's last NVTX event, with
  // "open_at_end": true.
  void finish_nvtx();

  // A launch, copy or memset whose GPU work is not in the trace.
  void operation_alone(const HostOperation& operation);
  // GPU work whose call is not in the trace.
  void gpu_work_alone(const DeviceActivity& activity);
  // GPU work the timing backend saw that no hooked call submitted: a slice
  // named "unattributed ..." on its stream's track (on a track of the
  // backend's stream id when the stream was never seen by a hooked call).
  void unattributed_gpu_work(SectionContext& section, uint32_t tid, const format::UnattributedGpuWorkRecord& record);
  // Both sides, with a flow from the call to the work when time allows.
  void joined(const HostOperation& operation, const DeviceActivity& activity);

  // The GPU slices still held back for their stream's order (below), at
  // the end of the input.
  void release_held_gpu_work();

  // A graph launch timed node by node (CUPTI): its call, with a flow to the
  // replay, and each node as a slice of its own on the stream, named by what
  // it ran; once no more nodes can come, the replay: from its first node's
  // start to its last node's end, on the stream's "graph replays" track.
  void graph_replay_node(const HostOperation& launch, const DeviceActivity& node, bool first);
  void graph_replay_done(const HostOperation& launch);

  // Kineto's events for its readers (kineto_slices.cpp): the steps found
  // (stats/step_detection.h) as user_annotation slices "ProfilerStep#N" on
  // a "Steps" track beside the thread they were found on, with `step_source`; a synchronization as
  // a cuda_sync slice on its thread's "CUDA syncs" track of the device.
  void profiler_steps(SectionContext& section, uint32_t tid, const std::vector<stats::Step>& steps,
                      const char* source);
  // `recorded`: the record of the event waited for, when known.
  void cuda_sync(SectionContext& section, uint32_t tid, const format::SynchronizeRecord& record,
                 const interpret::EventRecorded* recorded);

  // What the CPU was doing (cpu_slices.cpp): a CPU sample as a thread-scoped
  // instant "CPU sample" (category cpu_sample) on its thread, its stack
  // (no API leaf) in the "stack" arg; a blocking libc call as a slice on
  // its thread (category os_runtime) named by the call and what it waited
  // on, "read (pipe fd 5)", with its stack.
  void cpu_sample(SectionContext& section, uint32_t tid, const format::CpuSampleRecord& record,
                  CallStackRef stack);
  void blocking_call(SectionContext& section, uint32_t tid, const format::BlockingCallRecord& record,
                     CallStackRef stack);

  const SliceStats& stats() const { return stats_; }

 private:
  struct ApiPlacement {
    uint32_t tid;
    int64_t begin_ns;
    int64_t end_ns;
    int64_t adjusted_ns;
  };
  struct GpuWork {
    GpuPlacement placement;
    uint64_t stream;
    uint32_t launching_tid;
    int32_t device;
    int64_t measured_start_ns;
    int64_t measured_end_ns;
    // A collective's kernel: how long before its slice's start the rank
    // reached the collective on the stream (its measured start); 0 otherwise.
    int64_t since_arrival_ns;
  };

  ApiPlacement place_api(SectionContext& section, uint32_t tid, const format::ApiSpan& span);
  void add_graph_args(SectionContext& section, uint64_t graph_exec);
  // A kernel's GPU slice: Kineto's resource and occupancy args where the
  // trace has their inputs (stats/occupancy.h), the launch shape.
  void add_kernel_args(const SectionContext& section, const format::KernelLaunchRecord& launch);
  // `call_begin_ns`: where the launching call's slice begins (timeline ns).
  GpuWork place_gpu(const HostOperation* operation, const DeviceActivity& activity,
                    int64_t call_begin_ns = INT64_MIN);
  // Starts the slice of an API call with its common args in `args_` (the
  // caller adds its own, then calls emit()). `correlation_key` names the
  // call's correlation id: "correlation" where it is the call's own.
  void begin_api_slice(SectionContext& section, const ApiPlacement& placement, const format::ApiSpan& span,
                       uint64_t flow_id, CallStackRef stack, const char* correlation_key = "correlation");
  // Starts a slice on `track` with no args yet.
  void begin_slice(TrackRef track, int64_t begin_ns, int64_t end_ns, Str category, Str name);
  void emit() { out_.slice(slice_); }
  // A new flow id for an arrow from a call to its GPU work, or 0 (counted
  // as dropped) when the work would begin before the call.
  uint64_t flow_if(bool forward);
  void write_operation(const HostOperation& operation, const ApiPlacement& placement, uint64_t flow_id);
  void write_gpu_work(const HostOperation* operation, const DeviceActivity& activity,
                      const GpuWork& work, uint64_t flow_id);
  // Starts a GPU slice (counted).
  void begin_gpu_slice(Str category, Str name, const GpuPlacement& placement);
  Str intern(std::string_view text) { return layout_.strings().intern(text); }
  Str intern_static(std::string_view literal) { return layout_.strings().intern_static(literal); }

  TimelineSink& out_;
  TrackLayout& layout_;
  bool stacks_ = false;
  // The event being built (one at a time: each is emitted before the next begins).
  Slice slice_;
  Args args_;
  std::string name_;  // a name that is not interned
  std::vector<Str> list_;  // a list arg
  SliceStats stats_;
  uint64_t next_flow_id_ = 1;  // unique across the whole output

  // The previous slice on each host thread, to keep calls nested: records
  // arrive when calls return, so an outer call comes after the calls it
  // contains and a later sibling after its predecessor.
  struct LastSlice {
    int64_t begin_ns;
    int64_t end_ns;
  };
  std::unordered_map<uint64_t, LastSlice> last_on_thread_;

  // Graph launches timed node by node, until their nodes are done.
  struct Replay {
    uint64_t flow_id = 0;  // 0: no arrow (a node started before the call)
    int64_t start_ns = INT64_MAX;
    int64_t end_ns = INT64_MIN;
    int32_t device = 0;
  };
  std::unordered_map<uint64_t, Replay> replays_;  // by (section, correlation id)

  // A host function timed by events on a stream whose other work CUPTI
  // times: its call is written at once, its GPU slice waits until CUPTI
  // work on the stream that starts after it ends has been read. CUPTI's
  // records come in buffers, so the kernel before a host function can
  // arrive after it; the host function's event times map a few us early
  // (base/event_anchors.h), and placed first it would push that exact
  // kernel to an "overlapping work" lane. Placed after, it is the one that
  // moves (StreamLanes::kMaxAdjustNs).
  struct HeldGpuWork {
    HostOperation operation;
    DeviceActivity activity;  // its pointers into the pass are not kept: only valid while handed over
    int64_t call_begin_ns;
    uint64_t flow_id;
    bool collective_known;
    interpret::CollectiveInstance collective;  // a copy of *activity.collective
  };
  using StreamKey = std::tuple<const SectionContext*, uint64_t, uint32_t>;  // section, stream, per-thread tid
  static constexpr size_t kMaxHeldPerStream = 64;
  static bool is_held_host_function(const HostOperation& operation, const DeviceActivity& activity);
  static StreamKey stream_key(const HostOperation* operation, const DeviceActivity& activity);
  // A host function timed by events; other work timed by events while its
  // stream holds one (a collective's kernel is placed after what its
  // library queued before it: it waits in line).
  bool held_for_stream_order(const HostOperation& operation, const DeviceActivity& activity) const;
  // Before `activity` is placed: releases the held work on its stream that
  // it comes after.
  void release_passed(const HostOperation* operation, const DeviceActivity& activity);
  void hold(const HostOperation& operation, const DeviceActivity& activity, int64_t call_begin_ns, uint64_t flow_id);
  void place_held(const HeldGpuWork& held);
  std::map<StreamKey, std::deque<HeldGpuWork>> held_;


  struct OpenNvtxRange {
    SectionContext* section;
    uint32_t tid;
    uint64_t begin_ns;
    format::NvtxEventRecord record;  // the push or start
    std::string name;
    uint64_t id = 0;  // for its GPU projection
    // A start range whose end was read (its slice is written): it stays for
    // its projection until its thread's records pass the end, since records
    // of different threads are not in time order in the file.
    uint64_t end_ns = 0;
  };
  // A range's GPU projection per device, while its work is being joined.
  struct NvtxProjection {
    SectionContext* section = nullptr;
    uint32_t tid = 0;
    std::string name;
    std::map<int32_t, std::pair<uint64_t, uint64_t>> by_device;  // device -> (first start, last end)
    // With annotations on streams: the placed work, by its track (pid, tid):
    // first start and last end on the timeline, and as by_device has them.
    struct TrackSpan {
      int32_t device;
      int64_t begin, end;
      uint64_t first_start_ns, last_end_ns;
    };
    std::map<std::pair<uint32_t, uint32_t>, TrackSpan> by_track;
    uint32_t pending = 0;  // operations whose GPU side has not been seen
    bool closed = false;
  };
  void nvtx_projection_settle(uint64_t id);
  void nvtx_operation_done(const HostOperation& operation, const DeviceActivity* activity,
                           const GpuPlacement* placement = nullptr);
  // Whether [begin, end] nests with every annotation already on the track
  // (inside it, around it, or apart); if so it is added.
  bool annotation_fits(std::pair<uint32_t, uint32_t> track, int64_t begin, int64_t end);
  void write_nvtx_range(const OpenNvtxRange& open, uint64_t end_ns, bool open_at_end);
  void close_nvtx_projection(uint64_t id);
  // Lets go of the ended start ranges of (section key, tid) whose end lies before `at_ns`.
  void settle_ended_nvtx(uint64_t key, uint32_t tid, uint64_t at_ns);
  // The args of a range or mark, into args_.
  void add_nvtx_args(const SectionContext& section, const format::NvtxEventRecord& record);
  // Open push ranges per (section, tid, domain), innermost last; start
  // ranges per (section, range id); the last NVTX time per section.
  std::map<std::tuple<uint64_t, uint32_t, uint64_t>, std::vector<OpenNvtxRange>> nvtx_pushed_;
  std::map<std::pair<uint64_t, uint64_t>, OpenNvtxRange> nvtx_started_;
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> nvtx_ended_early_;  // an end read before its start
  // Acquisitions of user synchronization objects in progress: (section, tid, handle) -> start.
  std::map<std::tuple<uint64_t, uint32_t, uint64_t>, uint64_t> nvtx_acquiring_;
  std::unordered_map<uint64_t, NvtxProjection> nvtx_projections_;
  bool annotations_on_streams_ = false;
  // The annotations written on each stream track: start -> end (timeline ns).
  std::map<std::pair<uint32_t, uint32_t>, std::multimap<int64_t, int64_t>> stream_annotations_;
  std::map<std::pair<uint64_t, uint64_t>, std::vector<uint64_t>> nvtx_waiting_;  // (section, correlation) -> range ids
  uint64_t nvtx_next_id_ = 1;
  std::unordered_map<uint64_t, uint64_t> nvtx_last_ns_;
};

}  // namespace proflaunch::tools::timeline
