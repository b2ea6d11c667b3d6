// proflaunch trace format v1: the file header, chunk framing and record layouts.
//
// This header is the contract between preload/ (which writes records in place
// into per-thread buffers), formats/ (framing, reader, writer) and tools/
// (which interpret them). It has no dependencies beyond <cstdint> so that the
// shim can include it without pulling anything into the traced process.
//
// Layout rules (formats/README.md documents them for people):
//  - Everything is little-endian, packed, fixed-size except where a record says
//    it has a variable tail. Sizes are pinned by static_asserts below. A kind
//    that grew keeps its first size in minimum_record_bytes() (record_kinds.h).
//  - Every record starts with RecordHeader{kind, bytes}; `bytes` is the whole
//    record including the header and any tail. A reader skips kinds it does
//    not know by `bytes`, so new kinds never break old readers.
//  - A record kind's fixed part may only grow at its end in a later version;
//    readers accept records longer than the struct they know and ignore the
//    extra bytes, and treat shorter ones as corrupt.
//  - Identifiers that the hot path cannot afford to resolve (kernel names,
//    API names, strings) are interned: the shim writes a definition record
//    once, into a Definitions chunk, and events refer to it by id/handle.
#pragma once

#include <cstddef>
#include <cstdint>

namespace proflaunch::format {

// ---------------------------------------------------------------------------
// File header: once at the start of a joined trace and of every part file.

inline constexpr char kFileMagic[8] = {'P', 'R', 'O', 'F', 'L', 'N', 'C', 'H'};
inline constexpr uint32_t kFormatVersion = 1;

// Feature bits: what a writer used. A reader refuses a file whose
// required-feature bits it does not know; optional bits are informational.
enum FeatureBits : uint64_t {
  kFeatureNone = 0,
  // Chunks may be delta-coded (ChunkHeader.flags kChunkFlagRecordDelta).
  kFeatureRecordDelta = 1u << 0,
};
inline constexpr uint64_t kKnownRequiredFeatures = kFeatureRecordDelta;

#pragma pack(push, 1)
struct FileHeader {
  char magic[8];            // kFileMagic
  uint32_t format_version;  // kFormatVersion
  uint32_t header_bytes;    // sizeof(FileHeader) for v1; readers skip extra bytes
  uint64_t required_features;
  uint64_t optional_features;
  uint64_t reserved;
};
#pragma pack(pop)
static_assert(sizeof(FileHeader) == 40);

// ---------------------------------------------------------------------------
// Chunks: after the header the file is a sequence of chunks. Each chunk's
// payload is one independent zstd frame (with content checksum) that
// decompresses to a sequence of records. A chunk belongs to one section: one
// process image (a pid after exec is a new section). Sections interleave
// freely; a reader groups chunks by section_id.
//
// Recovery: a truncated tail loses only the chunk it cuts. After a corrupt
// chunk (bad header CRC, zstd error, checksum mismatch) the reader scans
// forward for the next kChunkMagic whose header CRC verifies.

inline constexpr uint32_t kChunkMagic = 0x4B434C50;  // "PLCK" little-endian

enum class ChunkKind : uint16_t {
  // Definitions and metadata: ProcessInfo, StringDef, ApiDef, FunctionDef,
  // ThreadInfo, DeviceInfo, SectionEnd. Small; a converter reads all of these
  // in a first pass without decompressing any Events chunk.
  kDefinitions = 1,
  // Hot records: launches, copies, syncs, GPU activity, LOST.
  kEvents = 2,
};

#pragma pack(push, 1)
struct ChunkHeader {
  uint32_t magic;           // kChunkMagic
  uint16_t kind;            // ChunkKind
  uint16_t flags;           // ChunkFlags
  uint64_t section_id;      // random, unique per process image
  uint32_t payload_bytes;   // compressed size of the zstd frame that follows
  uint32_t header_crc32;    // CRC-32 (zlib polynomial) of the 20 bytes above
};
#pragma pack(pop)
static_assert(sizeof(ChunkHeader) == 24);

enum ChunkFlags : uint16_t {
  // The records of this chunk are delta-coded (formats/record_delta.h); the
  // reader undoes it after decompression.
  kChunkFlagRecordDelta = 1u << 0,
};
inline constexpr uint16_t kKnownChunkFlags = kChunkFlagRecordDelta;

// Upper bound a reader accepts for one chunk (compressed and decompressed);
// writers emit ~1 MiB frames. Anything bigger is treated as corruption.
inline constexpr uint32_t kMaxChunkPayloadBytes = 64u << 20;
inline constexpr uint32_t kMaxChunkContentBytes = 64u << 20;

// ---------------------------------------------------------------------------
// Records.

// The one list of record kinds: X(Name, number, chunk, first_bytes, span).
// Each kind's struct is `NameRecord`; `chunk` is the chunk kind it belongs in
// (Definitions or Events); `first_bytes` is the size of the first version of
// a kind whose fixed part grew (0: it never grew); `span`: the record has an
// ApiSpan at kApiSpanOffset (the shim's writer converts its times). The enum, the names, the
// known-kinds list and the definition/event split are generated from it
// (here and in record_kinds.h/.cpp); adding a kind is one line.
//
// Numbers: 1-31 definitions, 32-63 events, 64-95 memory (allocation) records,
// 96-127 stacks and what the CPU was doing (CallStack, CpuSample,
// BlockingCall, CpuSamplingInfo are events, the others definitions), 128-159
// collectives (NCCL), 160-191 reserved for annotations (NVTX), 192-223 CUDA
// graphs and stream capture, 224-239 device metrics (and definition 8).
#define PROFLAUNCH_RECORD_KINDS(X)               \
  X(ProcessInfo, 1, kDefinitions, 0, false)             \
  X(StringDef, 2, kDefinitions, 0, false)               \
  X(ApiDef, 3, kDefinitions, 0, false)                  \
  X(FunctionDef, 4, kDefinitions, 24, false)             \
  X(ThreadInfo, 5, kDefinitions, 0, false)              \
  X(DeviceInfo, 6, kDefinitions, 44, false)              \
  X(SectionEnd, 7, kDefinitions, 0, false)              \
  X(GpuMetricDef, 8, kDefinitions, 0, false)            \
  /* the following records (until the next   */ \
  /* batch) come from this thread             */ \
  X(ThreadBatch, 32, kEvents, 0, false)                 \
  X(Lost, 33, kEvents, 0, false)                        \
  X(ApiCall, 34, kEvents, 40, true)                    \
  X(KernelLaunch, 35, kEvents, 0, true)                \
  X(MemoryCopy, 36, kEvents, 88, true)                 \
  X(MemorySet, 37, kEvents, 0, true)                   \
  X(Synchronize, 38, kEvents, 0, true)                 \
  X(ObjectLifecycle, 39, kEvents, 0, true)             \
  X(GpuActivity, 40, kEvents, 48, false)                 \
  X(ApiCount, 41, kEvents, 0, false)                    \
  X(GpuTimingInfo, 42, kEvents, 0, false)               \
  X(UnattributedGpuWork, 43, kEvents, 0, false)         \
  X(CaptureWindow, 44, kEvents, 0, false)               \
  X(MemoryOperation, 64, kEvents, 0, true)             \
  X(MemoryInfo, 65, kEvents, 0, true)                  \
  X(CallStack, 96, kEvents, 0, false)                   \
  X(NativeStackDef, 97, kDefinitions, 0, false)         \
  X(PythonStackDef, 98, kDefinitions, 0, false)         \
  X(ModuleDef, 99, kDefinitions, 0, false)              \
  X(SymbolDef, 100, kDefinitions, 0, false)             \
  X(CpuSample, 101, kEvents, 0, false)                  \
  X(BlockingCall, 102, kEvents, 0, true)                \
  X(CpuSamplingInfo, 103, kEvents, 0, false)            \
  X(CollectiveComm, 128, kEvents, 0, true)             \
  X(Collective, 129, kEvents, 0, true)                 \
  X(CollectiveGroup, 130, kEvents, 0, true)           \
  X(NvtxDomainDef, 160, kDefinitions, 0, false)         \
  X(NvtxNameDef, 161, kDefinitions, 0, false)           \
  X(NvtxEvent, 162, kEvents, 0, true)                  \
  X(StreamCapture, 192, kEvents, 0, true)              \
  X(CapturedNode, 193, kEvents, 0, false)               \
  X(GraphNode, 194, kEvents, 0, false)                  \
  X(GraphExec, 195, kEvents, 0, true)                  \
  X(GraphLaunch, 196, kEvents, 0, true)                \
  X(GpuMetricSample, 224, kEvents, 0, false)

enum class RecordKind : uint16_t {
#define PROFLAUNCH_RECORD_KIND_ENUM(name, number, chunk, first_bytes, span) k##name = number,
  PROFLAUNCH_RECORD_KINDS(PROFLAUNCH_RECORD_KIND_ENUM)
#undef PROFLAUNCH_RECORD_KIND_ENUM
};

#pragma pack(push, 1)
struct RecordHeader {
  uint16_t kind;   // RecordKind
  uint16_t bytes;  // total size of this record, header and tail included
};
#pragma pack(pop)
static_assert(sizeof(RecordHeader) == 4);

// Vendor-neutral: the same record kinds serve CUDA and HIP. `vendor` says
// whose API produced a handle where that matters.
enum class Vendor : uint8_t { kUnknown = 0, kNvidia = 1, kAmd = 2 };

// Devices of the HIP runtime (AMD) are numbered from kAmdDeviceBase in every
// record (device = kAmdDeviceBase + HIP ordinal), so that a process using
// both vendors' runtimes has distinct device ids. device_label() names them.
inline constexpr int32_t kAmdDeviceBase = 1 << 16;
inline bool is_amd_device(int32_t device) { return device >= kAmdDeviceBase; }
inline int32_t device_ordinal(int32_t device) { return is_amd_device(device) ? device - kAmdDeviceBase : device; }

// Special stream handle values. Raw handles are recorded as the program passed
// them; the shim normalizes the implicit ones so that the converter can tell
// the legacy default stream (one per device) from per-thread default streams
// (one per host thread; the thread comes from the enclosing ThreadBatch).
inline constexpr uint64_t kStreamLegacy = 0x1;     // NULL and CU_STREAM_LEGACY
inline constexpr uint64_t kStreamPerThread = 0x2;  // CU_STREAM_PER_THREAD and _ptsz with NULL

#pragma pack(push, 1)

// ---- Definitions ----------------------------------------------------------

// Once per section, first record of the first Definitions chunk.
struct ProcessInfoRecord {
  RecordHeader header;
  uint32_t pid;
  uint32_t ppid;
  int32_t rank;        // RANK (or launcher-specific equivalent), -1 when unset
  int32_t local_rank;  // LOCAL_RANK, -1 when unset
  int32_t world_size;  // WORLD_SIZE, -1 when unset
  uint32_t flags;      // ProcessFlags
  // Clock snapshot taken back to back at start; all event timestamps are
  // CLOCK_MONOTONIC ns. REALTIME aligns hosts, BOOTTIME is Perfetto's default.
  uint64_t monotonic_ns;
  uint64_t realtime_ns;
  uint64_t boottime_ns;
  uint64_t parent_section_id;  // section of the process that forked/exec'd us, 0 if none known
  uint32_t host_string;        // StringDef ids
  uint32_t command_line_string;  // arguments joined with '\0'
  uint32_t executable_string;
  uint32_t tool_version_string;
};
static_assert(sizeof(ProcessInfoRecord) == 76);

enum ProcessFlags : uint32_t {
  kProcessForked = 1u << 0,      // section started in a fork child
  kProcessAfterExec = 1u << 1,   // section started in an exec'd image of a traced process
  // The launcher's device sampler (launcher/gpu_metrics), not a traced
  // process: its section holds DeviceInfo, GpuMetricDef and GpuMetricSample.
  kProcessDeviceSampler = 1u << 2,
};

// Followed by `bytes - sizeof(StringDefRecord)` bytes of UTF-8, not
// NUL-terminated. Longer strings are truncated by the writer.
struct StringDefRecord {
  RecordHeader header;
  uint32_t id;  // > 0; unique within a section
};
static_assert(sizeof(StringDefRecord) == 8);
inline constexpr size_t kMaxStringBytes = 65535 - sizeof(StringDefRecord);

enum class ApiDomain : uint8_t {
  kOther = 0,
  kDriver = 1,    // cu*, hipDrv*
  kRuntime = 2,   // cuda*, hip*
  kCollective = 3,
  kAnnotation = 4,
  kOsRuntime = 5,  // libc calls where threads block (BlockingCall records)
};

// Names the small integer `api` used by event records.
struct ApiDefRecord {
  RecordHeader header;
  uint16_t api;
  uint8_t domain;  // ApiDomain
  uint8_t vendor;  // Vendor
  uint32_t name_string;
};
static_assert(sizeof(ApiDefRecord) == 12);

// A device function handle (CUfunction, hipFunction_t, or a runtime host stub)
// and its (mangled) name. A later definition of the same handle in the same
// section replaces the earlier one from `since_ns` on (modules can be unloaded
// and handles reused).
struct FunctionDefRecord {
  RecordHeader header;
  uint32_t name_string;
  uint64_t handle;
  uint64_t since_ns;
  // Added after the first version (24 bytes): the function's resource use
  // as the driver reports it (cuFuncGetAttribute / hipFuncGetAttributes),
  // for occupancy estimates. A field is valid only when its bit is set in
  // `attributes_known` (FunctionAttributeBits): a query that failed, a host
  // function, or a file of the first version leave it 0 and its bit clear
  // (0 is a real value for shared and local memory).
  uint32_t registers_per_thread;          // CU_FUNC_ATTRIBUTE_NUM_REGS
  uint32_t static_shared_bytes;           // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
  uint32_t max_threads_per_block;         // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
  uint32_t local_bytes_per_thread;        // CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES
  uint32_t attributes_known;              // FunctionAttributeBits
  uint32_t reserved;
};
static_assert(sizeof(FunctionDefRecord) == 48);

// Which of FunctionDefRecord's attribute fields hold what the driver said.
enum FunctionAttributeBits : uint32_t {
  kFunctionRegisters = 1,
  kFunctionStaticShared = 2,
  kFunctionMaxThreadsPerBlock = 4,
  kFunctionLocalBytes = 8,
};

struct ThreadInfoRecord {
  RecordHeader header;
  uint32_t tid;
  uint32_t name_string;  // 0 when unnamed
  uint64_t since_ns;
};
static_assert(sizeof(ThreadInfoRecord) == 20);

struct DeviceInfoRecord {
  RecordHeader header;
  int32_t device;  // ordinal as the process sees it
  uint8_t vendor;
  uint8_t reserved[3];
  uint32_t name_string;
  uint32_t multiprocessor_count;
  uint64_t total_memory_bytes;
  uint8_t uuid[16];
  // Added after the first version (44 bytes): the per-SM and per-block
  // limits an occupancy estimate needs, from cuDeviceGetAttribute /
  // hipDeviceGetAttribute. 0 where the query failed or in files of the first
  // version (no device has 0 of any of them, except the reserved shared
  // memory, which is 0 before compute capability 8.0).
  uint32_t max_threads_per_multiprocessor;
  uint32_t max_blocks_per_multiprocessor;
  uint32_t registers_per_multiprocessor;
  uint32_t registers_per_block;
  uint32_t shared_bytes_per_multiprocessor;
  uint32_t shared_bytes_per_block;         // without opting in
  uint32_t shared_bytes_per_block_optin;   // cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) allows up to this
  uint32_t reserved_shared_bytes_per_block;  // the driver's own per block (1 KiB from 8.0 on)
  uint32_t warp_size;
  uint16_t compute_capability_major;
  uint16_t compute_capability_minor;
};
static_assert(sizeof(DeviceInfoRecord) == 84);

// Last record of a cleanly finished section. Its absence means the process
// died (or was killed) before the shim could finish.
struct SectionEndRecord {
  RecordHeader header;
  uint32_t reserved;
  uint64_t end_ns;
  uint64_t records_written;
  uint64_t records_dropped;
};
static_assert(sizeof(SectionEndRecord) == 32);

// ---- Events ---------------------------------------------------------------

struct ThreadBatchRecord {
  RecordHeader header;
  uint32_t tid;
};
static_assert(sizeof(ThreadBatchRecord) == 8);

// Records that could not be stored (buffer full, writer failing). Times
// bracket the lost records.
struct LostRecord {
  RecordHeader header;
  uint32_t reason;  // LostReason
  uint64_t first_ns;
  uint64_t last_ns;
  uint64_t count;
};
static_assert(sizeof(LostRecord) == 32);

enum class LostReason : uint32_t {
  kBufferFull = 1,
  kWriteFailed = 2,    // disk full, EFBIG, EIO (the writer stopped), or no descriptor for a while
  kThreadGone = 3,     // a thread exited while the writer was unable to drain it
  // GpuActivity records that could not be produced: the operation's timing
  // could not be queued, its context was destroyed first, or the process
  // ended before the GPU finished it. The launch records themselves exist.
  kGpuTimingUnresolved = 4,
  // Activity records the GPU-time backend itself dropped (CUPTI's dropped
  // record count: its buffers were full or none was given).
  kGpuTimingDropped = 5,
  // Not a loss: GPU work of calls made outside every capture window, which
  // the timing backend timed all the same (CUPTI sees all work); dropped on
  // purpose, and counted so that none of it reads as work no hooked call
  // made. first_ns/last_ns: the span of that work on the GPU.
  kOutsideCaptureWindow = 6,
  // CPU samples not taken: the signal landed where the thread's stack could
  // not be read safely (inside the shim's own recording, the dynamic loader,
  // a fault while reading), or the thread's sample buffer was full.
  kCpuSampleUnsafe = 7,
  kCpuSampleBufferFull = 8,
  // CUPTI PM sampling's hardware buffer filled before the shim decoded it:
  // the GPU took no samples until it was read (count: such events).
  kGpuMetricSamplesDropped = 9,
};

// Fields shared by every host API record. `result` is the API's return code
// as the API defines it (CUresult, cudaError_t, hipError_t).
struct ApiSpan {
  uint64_t begin_ns;
  uint64_t end_ns;
  uint64_t correlation_id;  // unique per section; links GPU activity to this call
  int32_t result;
  uint16_t api;             // ApiDefRecord.api
  uint16_t flags;           // ApiFlags
};
static_assert(sizeof(ApiSpan) == 32);

enum ApiFlags : uint16_t {
  kApiAsync = 1u << 0,
  kApiPerThreadStream = 1u << 1,   // a _ptsz/_ptds variant was called
  kApiViaRuntime = 1u << 2,        // a runtime hook saw the call before the driver hook
  // A counted call (see ApiCountRecord) recorded because it failed: its
  // duration was not measured and begin_ns == end_ns is when it returned.
  kApiNoDuration = 1u << 3,
  // The call's stream was capturing: its work became a node of the graph
  // being captured and did not run (no GpuActivity follows). A
  // CapturedNode record right after the call's record names the node.
  kApiCaptured = 1u << 4,
  // Written when a capture window opened, not when the call happened: the
  // object it made (a memory block, a communicator) was alive before the
  // window and still is. Its times are the window's start; it is state, not
  // a call, and API tables leave it out.
  kApiCarried = 1u << 5,
};

// A host API call that is not itself one of the operations below. Most are
// written at the first version's size (kApiCallPlainBytes) and end at
// `span`; an event record (cuEventRecord, cudaEventRecord, hipEventRecord and
// their variants) is written whole: the event and the stream it was
// recorded on, what a later wait for the event waits for. A reader tells
// the two apart by the record's size (`event` reads 0 in a plain one).
struct ApiCallRecord {
  RecordHeader header;
  uint32_t reserved;
  ApiSpan span;
  uint64_t event;   // the event recorded (CUevent, hipEvent_t), 0 in a plain call
  uint64_t stream;  // the stream it was recorded on, see kStreamLegacy / kStreamPerThread
};
static_assert(sizeof(ApiCallRecord) == 56);
inline constexpr uint16_t kApiCallPlainBytes = 40;

// Calls that are counted rather than recorded one by one: trivial, frequent
// getters (cuCtxGetCurrent, cudaGetLastError, attribute queries: the list is
// PROFLAUNCH_COUNTED's), and the driver calls a runtime call makes on its own
// behalf. Per thread (the enclosing ThreadBatch): `count` calls of `api` that
// succeeded between first_ns and last_ns. A counted call that fails is
// recorded in full instead (ApiCall with kApiNoDuration), and not counted.
struct ApiCountRecord {
  RecordHeader header;
  uint16_t api;  // ApiDefRecord.api
  uint16_t reserved;
  uint64_t count;
  uint64_t first_ns;
  uint64_t last_ns;
};
static_assert(sizeof(ApiCountRecord) == 32);

struct Dim3 {
  uint32_t x, y, z;
};
static_assert(sizeof(Dim3) == 12);

struct KernelLaunchRecord {
  RecordHeader header;
  int32_t device;
  ApiSpan span;
  uint64_t function;  // FunctionDefRecord.handle
  uint64_t stream;    // raw handle, see kStreamLegacy / kStreamPerThread
  uint64_t context;
  Dim3 grid;
  Dim3 block;
  uint32_t dynamic_shared_bytes;
  uint32_t launch_flags;  // LaunchFlags
};
static_assert(sizeof(KernelLaunchRecord) == 96);

enum LaunchFlags : uint32_t {
  kLaunchCooperative = 1u << 0,
  kLaunchExtended = 1u << 1,  // cuLaunchKernelEx / cudaLaunchKernelExC
  // Not a kernel: a host function queued on the stream (cuLaunchHostFunc,
  // cuStreamAddCallback). `function` is its address, grid and block are 0;
  // its GpuActivity (kHostFunction) is when the stream ran it.
  kLaunchHostFunction = 1u << 2,
};

enum class MemoryKind : uint8_t {
  kUnknown = 0,
  kPageableHost = 1,
  kPinnedHost = 2,
  kDevice = 3,
  kManaged = 4,
  kArray = 5,
};

enum class CopyDirection : uint8_t {
  kUnknown = 0,
  kHostToDevice = 1,
  kDeviceToHost = 2,
  kDeviceToDevice = 3,
  kHostToHost = 4,
  kPeer = 5,  // device to device across devices/contexts
};

struct MemoryCopyRecord {
  RecordHeader header;
  int32_t device;
  ApiSpan span;
  uint64_t bytes;
  uint64_t stream;
  uint64_t context;
  uint64_t src;
  uint64_t dst;
  uint8_t direction;  // CopyDirection
  uint8_t src_kind;   // MemoryKind
  uint8_t dst_kind;   // MemoryKind
  uint8_t reserved;
  int32_t peer_device;  // for kPeer, the source device; else -1
  // Added after the first version (88 bytes; readers zero-extend shorter
  // records of a known kind down to kMinimumRecordBytes): the device each
  // end lives on, from the pointers' attributes; -1 for host memory or when
  // not known. In files of the first version both read as 0.
  int32_t src_device;
  int32_t dst_device;
};
static_assert(sizeof(MemoryCopyRecord) == 96);

struct MemorySetRecord {
  RecordHeader header;
  int32_t device;
  ApiSpan span;
  uint64_t bytes;
  uint64_t stream;
  uint64_t context;
  uint64_t dst;
  uint32_t value;
  uint8_t element_bytes;  // 1, 2 or 4
  uint8_t dst_kind;       // MemoryKind
  uint16_t reserved;
};
static_assert(sizeof(MemorySetRecord) == 80);

enum class SyncTarget : uint8_t {
  kDevice = 1,   // cudaDeviceSynchronize, cuCtxSynchronize
  kStream = 2,
  kEvent = 3,    // cuEventSynchronize
  kStreamWaitEvent = 4,  // GPU-side wait; recorded for dependencies, costs the host nothing
  kImplicit = 5, // a synchronous copy/memset/free that blocked
};

// Where the CPU waits for the GPU: span.begin_ns..end_ns is the wait.
struct SynchronizeRecord {
  RecordHeader header;
  int32_t device;
  ApiSpan span;
  uint64_t stream;  // the stream synchronized or waiting, 0 when none
  uint64_t event;   // the event waited for, 0 when none
  uint64_t context;
  uint8_t target;   // SyncTarget
  uint8_t reserved[7];
};
static_assert(sizeof(SynchronizeRecord) == 72);

enum class ObjectKind : uint8_t {
  kStream = 1,
  kEvent = 2,
  kContext = 3,
  kModule = 4,
  kLibrary = 5,
};

enum class LifecycleAction : uint8_t {
  kCreate = 1,
  kDestroy = 2,
};

// Stream/event/context/module creation and destruction. For streams, `flags`
// are the creation flags and `priority` the priority; `id` is the driver's
// unique id where it has one (cuStreamGetId), else 0.
struct ObjectLifecycleRecord {
  RecordHeader header;
  int32_t device;
  ApiSpan span;
  uint64_t handle;
  uint64_t context;
  uint64_t id;
  uint32_t flags;
  int32_t priority;
  uint8_t object;  // ObjectKind
  uint8_t action;  // LifecycleAction
  uint8_t reserved[6];
};
static_assert(sizeof(ObjectLifecycleRecord) == 80);

enum class GpuActivityKind : uint8_t {
  kKernel = 1,
  kMemoryCopy = 2,
  kMemorySet = 3,
  kHostFunction = 4,
  kGraph = 5,  // a graph launch as one unit of work on its stream
};

enum class GpuTimingSource : uint8_t {
  kEvents = 1,  // driver events recorded around the operation
  kCupti = 2,
  kRocprofiler = 3,
};

// When an operation ran on the device, in host CLOCK_MONOTONIC ns, written by
// the timing backend once it has resolved the operation. Joined to its launch
// by correlation_id (same section).
struct GpuActivityRecord {
  RecordHeader header;
  int32_t device;
  uint64_t correlation_id;
  uint64_t start_ns;
  uint64_t end_ns;
  uint64_t stream;
  uint8_t kind;    // GpuActivityKind
  uint8_t source;  // GpuTimingSource
  uint8_t reserved[6];
  // Added after the first version (48 bytes): for work a graph launch ran,
  // the node (GraphNodeRecord.node) and its kind in `kind`, with the graph
  // launch's correlation_id; 0 otherwise. The events backend times a graph
  // launch as one kGraph activity and leaves it 0; a backend that sees
  // inside graphs (CUPTI) fills it per node.
  uint64_t graph_node;
};
static_assert(sizeof(GpuActivityRecord) == 56);

// Which GPU timing backend runs from `at_ns` on, and why: written when the
// shim chooses one (--gpu-timing=auto picks CUPTI when it can subscribe) and
// again when it changes (the program took CUPTI for itself).
struct GpuTimingInfoRecord {
  RecordHeader header;
  uint8_t source;     // GpuTimingSource; 0: none
  uint8_t requested;  // GpuTimingRequest
  uint8_t reserved[2];
  uint32_t reason_string;  // StringDef: why this backend (empty when it is the one asked for)
  uint64_t at_ns;
};
static_assert(sizeof(GpuTimingInfoRecord) == 20);

enum class GpuTimingRequest : uint8_t { kNone = 0, kEvents = 1, kCupti = 2, kAuto = 3 };

// Capture windows (proflaunch --capture-range, --steps, --delay, --duration):
// the spans of time in which the process recorded. A section with no
// CaptureWindow record recorded throughout. Outside a window nothing is
// written; at a window's start the memory blocks and communicators alive
// then are written as records flagged kApiCarried. A window with no end
// record in its section lasted until the section ended.
struct CaptureWindowRecord {
  RecordHeader header;
  uint32_t index;        // 0, 1, ... in the order windows opened in the process
  uint64_t at_ns;
  uint8_t action;        // CaptureWindowAction
  uint8_t trigger;       // CaptureTrigger: what opened (begin) or closed (end) it
  uint16_t reserved;
  uint32_t name_string;  // StringDef: the NVTX range or kernel of the trigger; else 0
  uint32_t step;         // steps: the first step in the window (begin), the last (end); else 0
  uint32_t reserved2;
};
static_assert(sizeof(CaptureWindowRecord) == 32);

enum class CaptureWindowAction : uint8_t { kBegin = 1, kEnd = 2 };

enum class CaptureTrigger : uint8_t {
  kStart = 1,        // the process started with a window open (--duration alone)
  kDelay = 2,        // --delay elapsed
  kDuration = 3,     // --duration elapsed (end)
  kProfilerApi = 4,  // cuProfilerStart / cuProfilerStop (and the runtime's)
  kNvtxRange = 5,    // the NVTX range of --capture-range=nvtx:... began / ended
  kStep = 6,         // --steps: the first active step began / the last one ended
  kExit = 7,         // the process ended with the window open (end)
  kFork = 8,         // a fork child starts inside its parent's window (begin)
  kExec = 9,         // the section ended at exec with the window open (end)
  kRequest = 10,     // proflaunch ctl start / stop / dump
  // Flight recorder dumps (--ring): the window is the records kept in memory
  // and its begin and end both name what wrote them out.
  kCrash = 11,        // a crash signal
  kOutOfMemory = 12,  // the first device allocation that failed for lack of memory
  kStickyError = 13,  // the first sticky device error (illegal address, launch failure...)
};

// Device work that no hooked call accounts for (the GPU-time backend saw it;
// no launch, copy or memset the hooks recorded submitted it): launched by a
// path the hooks do not see. Counted by `proftrace info` as the hooks' coverage.
inline constexpr uint8_t kUnattributedStreamKnown = 0x1;  // `stream` is a recorded stream handle

struct UnattributedGpuWorkRecord {
  RecordHeader header;
  int32_t device;
  uint8_t kind;    // GpuActivityKind
  uint8_t source;  // GpuTimingSource
  uint8_t flags;   // kUnattributed*
  uint8_t reserved;
  uint32_t name_string;  // kernels: StringDef of the (mangled) name; else 0
  // With kUnattributedStreamKnown: the stream as the hooked calls recorded
  // it (the backend matched its own stream id to one of theirs); else the
  // backend's stream id (CUPTI streamId).
  uint64_t stream;
  uint64_t start_ns;
  uint64_t end_ns;
  uint64_t bytes;        // copies and memsets
};
static_assert(sizeof(UnattributedGpuWorkRecord) == 48);

// ---- CUDA graphs and stream capture (192..223) ------------------------------
//
// A capture turns the work submitted to a stream (and to the streams it
// joins) into a graph instead of running it; a graph is instantiated into an
// executable graph, which is launched as one unit on a stream. The records
// follow that: StreamCapture at begin and end, CapturedNode for each call
// that became a node (its stack is the call's CallStack, same correlation
// id), GraphNode for each node of a graph when it is instantiated, GraphExec
// for the executable graph's life, GraphLaunch for each launch (its GPU time
// is a GpuActivity of kind kGraph with the launch's correlation id).

enum class CaptureAction : uint8_t {
  kBegin = 1,  // cuStreamBeginCapture, cuStreamBeginCaptureToGraph
  kEnd = 2,    // cuStreamEndCapture
};
inline constexpr uint8_t kCaptureModeUnknown = 0xFF;  // a call that does not pass one

struct StreamCaptureRecord {
  RecordHeader header;
  int32_t device;
  ApiSpan span;
  uint64_t stream;      // see kStreamLegacy / kStreamPerThread
  uint64_t context;
  uint64_t capture_id;  // the driver's capture sequence id; 0 if not known
  uint64_t graph;       // end: the graph produced (0 when the capture failed); begin: the graph captured into, or 0
  uint8_t action;       // CaptureAction
  uint8_t mode;         // CUstreamCaptureMode (0 global, 1 thread-local, 2 relaxed), or kCaptureModeUnknown
  uint8_t reserved[6];
};
static_assert(sizeof(StreamCaptureRecord) == 80);

// The call with `correlation_id` (a launch, copy, memset, host function,
// graph launch... flagged kApiCaptured) became `node` of `graph`.
struct CapturedNodeRecord {
  RecordHeader header;
  uint32_t reserved;
  uint64_t correlation_id;
  uint64_t capture_id;
  uint64_t graph;
  uint64_t node;  // 0 when the driver did not say
};
static_assert(sizeof(CapturedNodeRecord) == 40);

// CUgraphNodeType's values (cuda.h), kept as they are.
enum class GraphNodeType : uint8_t {
  kKernel = 0,
  kMemcpy = 1,
  kMemset = 2,
  kHost = 3,
  kGraph = 4,  // a child graph: `function` is the child graph, whose nodes follow
  kEmpty = 5,
  kWaitEvent = 6,
  kEventRecord = 7,
  kExternalSemaphoreSignal = 8,
  kExternalSemaphoreWait = 9,
  kMemAlloc = 10,
  kMemFree = 11,
  kBatchMemOp = 12,
  kConditional = 13,
};

enum GraphNodeFlags : uint8_t {
  kGraphNodeDependenciesTruncated = 1u << 0,  // more than kMaxGraphNodeDependencies
};
inline constexpr uint16_t kMaxGraphNodeDependencies = 1024;

// One node of `graph`, written when a graph is instantiated (graph_exec is
// the executable graph made from it). Followed by `dependency_count`
// uint64 node handles: the nodes it depends on.
struct GraphNodeRecord {
  RecordHeader header;
  uint8_t type;   // GraphNodeType
  uint8_t flags;  // GraphNodeFlags
  uint16_t dependency_count;
  uint64_t graph_exec;
  uint64_t graph;
  uint64_t node;
  uint64_t function;  // kernel: FunctionDefRecord.handle; host: the function; child graph: the graph; else 0
  Dim3 grid;          // kernel
  Dim3 block;         // kernel
  uint32_t dynamic_shared_bytes;  // kernel
  int32_t device;     // memcpy/memset/alloc: the device of the memory; else -1
  uint64_t bytes;     // memcpy, memset (width * height * element size), mem alloc
  uint64_t address;   // memset: destination; mem alloc: the address; mem free: the address; else 0
  // tail: uint64_t dependencies[dependency_count]
};
static_assert(sizeof(GraphNodeRecord) == 88);

enum class GraphExecAction : uint8_t {
  kInstantiate = 1,   // graph -> graph_exec; its GraphNode records come first
  kUpdate = 2,        // cuGraphExecUpdate: graph_exec takes graph's parameters
  kUpload = 3,        // cuGraphUpload on `stream`
  kDestroy = 4,       // cuGraphExecDestroy
  kGraphDestroy = 5,  // cuGraphDestroy: graph_exec is 0
};

struct GraphExecRecord {
  RecordHeader header;
  int32_t device;
  ApiSpan span;
  uint64_t graph_exec;
  uint64_t graph;
  uint64_t stream;  // kUpload; else 0
  uint64_t context;
  uint32_t node_count;  // kInstantiate: the graph's nodes (child graphs' included); else 0
  uint8_t action;       // GraphExecAction
  uint8_t reserved[3];
};
static_assert(sizeof(GraphExecRecord) == 80);

// cuGraphLaunch: one submission of every node of graph_exec to `stream`.
struct GraphLaunchRecord {
  RecordHeader header;
  int32_t device;
  ApiSpan span;
  uint64_t graph_exec;
  uint64_t stream;  // see kStreamLegacy / kStreamPerThread
  uint64_t context;
};
static_assert(sizeof(GraphLaunchRecord) == 64);

// ---- Collectives (NCCL) ------------------------------------------------------
//
// A collective instance is the same call on every rank of a communicator:
// (comm_id, sequence) names it across ranks and processes. Its GPU time is
// the GpuActivity of the kernel launched for it: that launch carries the
// call's correlation id (outside a group) or the CollectiveGroup record's
// (inside one), and its GPU start is when the stream reached the call.

enum class CollectiveOp : uint8_t {
  kUnknown = 0,
  kAllReduce = 1,
  kBroadcast = 2,
  kReduce = 3,
  kAllGather = 4,
  kReduceScatter = 5,
  kAlltoAll = 6,
  kGather = 7,
  kScatter = 8,
  kSend = 9,
  kRecv = 10,
};

enum class CommAction : uint8_t {
  kInit = 1,      // ncclCommInitRank, ncclCommInitRankConfig
  kInitAll = 2,   // one record per communicator ncclCommInitAll made
  kSplit = 3,
  kFinalize = 4,
  kDestroy = 5,
  kAbort = 6,
};

// A communicator's creation or end, and what every later record refers to.
// Which library a communicator belongs to: NCCL, or RCCL (AMD's, which
// exports the same API names), from the file the real function lives in.
enum class CollectiveLibrary : uint8_t { kUnknown = 0, kNccl = 1, kRccl = 2 };

struct CollectiveCommRecord {
  RecordHeader header;
  int32_t device;           // CUDA device of the communicator, -1 unknown
  ApiSpan span;
  uint64_t comm;            // handle in this process
  uint64_t comm_id;         // the same on every rank: hash of the unique id (splits: of parent, split, color)
  uint64_t parent_comm_id;  // kSplit: the parent's comm_id, else 0
  int32_t rank;
  int32_t nranks;
  uint8_t action;           // CommAction
  uint8_t library;          // CollectiveLibrary (0 in files written before it was added)
  uint8_t reserved[6];
};
static_assert(sizeof(CollectiveCommRecord) == 80);

// One collective or point-to-point call.
struct CollectiveRecord {
  RecordHeader header;
  int32_t device;
  ApiSpan span;
  uint64_t comm;
  uint64_t comm_id;
  // Collectives: the call's number among this communicator's collectives
  // (from 1), equal on every rank. Send/recv: its number among this rank's
  // sends to (receives from) `root`, so a send and the matching receive agree.
  uint64_t sequence;
  uint64_t count;           // elements as the API counts them (sendcount, recvcount, count)
  uint64_t bytes;           // count * datatype size
  uint64_t stream;          // as recorded for launches (kStreamLegacy for NULL)
  uint64_t group_id;        // the CollectiveGroup's group_id when called inside a group, else 0
  int32_t root;             // root, or peer for send/recv; -1 when the op has none
  int32_t rank;
  int32_t nranks;
  uint8_t op;               // CollectiveOp
  uint8_t datatype;         // ncclDataType_t
  uint8_t reduction;        // ncclRedOp_t; 255 when the op does not reduce
  uint8_t group_depth;      // ncclGroupStart nesting at the call, 0 outside a group
};
static_assert(sizeof(CollectiveRecord) == 112);

// The outermost ncclGroupEnd, once per stream its members used: span is the
// ncclGroupEnd call, and span.correlation_id that of the kernel launched on
// `stream` for the members (their GPU time).
struct CollectiveGroupRecord {
  RecordHeader header;
  int32_t device;
  ApiSpan span;
  uint64_t group_id;        // what the members carry
  uint64_t stream;          // 0 when the group had no member with a stream
  uint32_t members;         // member calls on this stream
  uint32_t reserved;
};
static_assert(sizeof(CollectiveGroupRecord) == 64);

// ---- Memory (allocations) ----------------------------------------------------

// Which memory a MemoryOperation concerns.
enum class AllocationKind : uint8_t {
  kDevice = 1,          // cuMemAlloc, cuMemAllocPitch
  kPool = 2,            // stream-ordered: cuMemAllocAsync, cuMemAllocFromPoolAsync, cuMemFreeAsync, cuMemPoolTrimTo
  kManaged = 3,         // cuMemAllocManaged
  kPinnedHost = 4,      // cuMemAllocHost, cuMemHostAlloc, cuMemFreeHost
  kRegisteredHost = 5,  // cuMemHostRegister, cuMemHostUnregister (pinned in place)
  kPhysical = 6,        // VMM physical memory: cuMemCreate, cuMemRelease
  kMapping = 7,         // VMM: cuMemMap, cuMemUnmap, cuMemSetAccess
  kAddressRange = 8,    // VMM address space (no memory): cuMemAddressReserve, cuMemAddressFree
};

enum class MemoryAction : uint8_t {
  kAcquire = 1,    // allocate, register, create, map, reserve
  kRelease = 2,    // free, unregister, release, unmap, free the address range
  kSetAccess = 3,  // cuMemSetAccess
  kTrim = 4,       // cuMemPoolTrimTo
};

// Every call that obtains or gives back memory, failed ones included (a
// failed allocation has result != 0, address 0 and the requested size). The
// shim keeps no allocation table: a release names only the address (or
// handle), and a reader finds its size from the matching acquire.
struct MemoryOperationRecord {
  RecordHeader header;
  int32_t device;      // whose memory: the current context's device; cuMemCreate: its location; -1 unknown
  ApiSpan span;
  uint64_t address;    // the memory (acquire: the result, 0 on failure); kPool trim: 0
  uint64_t bytes;      // acquire: size (pitched: pitch * height); unmap, address free: the size passed; trim: bytes to keep; other releases: 0
  uint64_t stream;     // kPool: the stream (see kStreamLegacy / kStreamPerThread), else 0
  uint64_t handle;     // kPool: the pool; kPhysical, kMapping map: the generic allocation handle; else 0
  uint64_t context;
  uint64_t pool_reserved_bytes;    // kPool: the pool's reserved memory after the call; kPoolReservedUnknown if not known
  uint64_t pitch_or_offset_bytes;  // pitched allocation: the pitch; cuMemMap: offset into the physical memory; else 0
  uint32_t flags;      // the call's flags argument (cuMemHostAlloc, cuMemHostRegister, cuMemAllocManaged attach, cuMemSetAccess access)
  uint8_t kind;        // AllocationKind
  uint8_t action;      // MemoryAction
  uint16_t reserved;
};
static_assert(sizeof(MemoryOperationRecord) == 104);
static_assert(offsetof(MemoryOperationRecord, span) == 8);
inline constexpr uint64_t kPoolReservedUnknown = ~uint64_t{0};

// cuMemGetInfo / cudaMemGetInfo: the driver's view of the device.
struct MemoryInfoRecord {
  RecordHeader header;
  int32_t device;
  ApiSpan span;
  uint64_t free_bytes;
  uint64_t total_bytes;
};
static_assert(sizeof(MemoryInfoRecord) == 56);
static_assert(offsetof(MemoryInfoRecord, span) == 8);

#pragma pack(pop)

// Host API records keep their ApiSpan at one offset (after the header and a
// 4-byte field), so that code handling every such kind - the shim's writer
// converting ticks to ns, tools summarizing API calls - needs no per-kind
// layout. A kind with an ApiSpan says so in PROFLAUNCH_RECORD_KINDS.
inline constexpr size_t kApiSpanOffset = 8;


constexpr bool has_api_span(uint16_t kind) {
  switch (kind) {
#define PROFLAUNCH_RECORD_KIND_SPAN(name, number, chunk, first_bytes, span) \
  case number:                                                          \
    return span;
    PROFLAUNCH_RECORD_KINDS(PROFLAUNCH_RECORD_KIND_SPAN)
#undef PROFLAUNCH_RECORD_KIND_SPAN
    default:
      return false;
  }
}

// ---- NVTX -------------------------------------------------------------------
//
// The NVTX calls every module of the process makes (the program, PyTorch,
// NCCL, cuDNN each carry their own NVTX copy and attach to the shim through
// NVTX_INJECTION64_PATH). Domains and the names NVTX gives to things
// (registered strings, categories, OS threads, devices, streams, events) are
// definitions; each mark, push, pop, start and end is an NvtxEvent in its
// thread's stream. Push/pop ranges nest per thread and domain; start/end
// ranges are matched by `range_id` and may cross threads.

#pragma pack(push, 1)

// A domain (nvtxDomainCreateA/W). `domain` is the handle events carry; the
// default domain is 0 and has no definition.
struct NvtxDomainDefRecord {
  RecordHeader header;
  uint32_t name_string;
  uint64_t domain;
};
static_assert(sizeof(NvtxDomainDefRecord) == 16);

enum class NvtxNameKind : uint8_t {
  kRegisteredString = 1,  // handle: the nvtxStringHandle_t
  kCategory = 2,          // handle: the category id
  kOsThread = 3,          // handle: the OS thread id (nvtxNameOsThread)
  kCudaDevice = 4,        // handle: the device ordinal (nvtxNameCuDevice, nvtxNameCudaDevice)
  kCudaContext = 5,       // handle: the CUcontext
  kCudaStream = 6,        // handle: the stream as records carry it (see kStreamLegacy / kStreamPerThread)
  kCudaEvent = 7,         // handle: the event
  kSyncUser = 8,          // handle: a user synchronization object (nvtxDomainSyncUserCreate)
};

// A name NVTX gave to something, from now on (a later definition of the
// same (kind, domain, handle) renames it).
struct NvtxNameDefRecord {
  RecordHeader header;
  uint8_t kind;  // NvtxNameKind
  uint8_t reserved[3];
  uint64_t domain;  // registered strings and categories: their domain; else 0
  uint64_t handle;
  uint32_t name_string;
  uint32_t reserved2;
};
static_assert(sizeof(NvtxNameDefRecord) == 32);

enum class NvtxEventType : uint8_t {
  kMark = 1,
  kPush = 2,
  kPop = 3,
  kStart = 4,
  kEnd = 5,
  // A user synchronization object (the SYNC module): range_id is its handle.
  kSyncAcquireStart = 6,
  kSyncAcquireFailed = 7,
  kSyncAcquireSuccess = 8,
  kSyncReleasing = 9,
};

enum class NvtxMessageType : uint8_t {
  kNone = 0,
  kInline = 1,      // the record's tail: UTF-8 bytes, no terminator (wide strings converted)
  kRegistered = 2,  // message_handle: a registered string (NvtxNameDef kRegisteredString)
};

enum class NvtxPayloadType : uint8_t {
  kNone = 0,
  kUint64 = 1,
  kInt64 = 2,
  kDouble = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat = 6,
};

enum NvtxEventFlags : uint8_t {
  kNvtxColor = 1u << 0,      // `color` holds an ARGB colour
  kNvtxTruncated = 1u << 1,  // the message was cut to fit the record
  kNvtxUnmatched = 1u << 2,  // a pop with no open push on its thread and domain (the call returned -1)
};

// One NVTX call. span: the call (begin, end, api, result: the call's return
// value for push and pop - the nesting depth - else 0); for start/end,
// `range_id` is the id start returned and end was given.
struct NvtxEventRecord {
  RecordHeader header;
  uint8_t type;          // NvtxEventType
  uint8_t message_type;  // NvtxMessageType
  uint8_t payload_type;  // NvtxPayloadType
  uint8_t flags;         // NvtxEventFlags
  ApiSpan span;
  uint64_t domain;       // 0: the default domain
  uint64_t range_id;
  uint64_t payload;      // the payload's bits, as payload_type says
  uint64_t message_handle;
  uint32_t category;
  uint32_t color;
  // tail: the inline message
};
static_assert(sizeof(NvtxEventRecord) == 80);
static_assert(offsetof(NvtxEventRecord, span) == 8);

#pragma pack(pop)

// ---- Call stacks ------------------------------------------------------------
//
// Stacks are interned like strings: each distinct stack is defined once
// (NativeStackDef, PythonStackDef) and events refer to it by id through a
// CallStack record that follows the event in its thread's stream. Native
// frames are raw return addresses; ModuleDef records map them to files, and
// SymbolDef records (appended by the launcher after the run) name them.

#pragma pack(push, 1)

// Where in the program a stack was taken (the --stacks choices).
enum class StackPoint : uint8_t {
  kLaunch = 1,  // GPU work submitted: kernel launches, copies, memsets
  kMemory = 2,  // allocations and frees
  kSync = 3,    // synchronization
  kBlocking = 4,  // a libc call that blocked (BlockingCall)
};

// The stacks of the event record just before it in the same thread's stream,
// joined to it by correlation_id (the event's ApiSpan::correlation_id).
struct CallStackRecord {
  RecordHeader header;
  uint8_t point;  // StackPoint
  uint8_t reserved[3];
  uint64_t correlation_id;
  uint32_t native_stack;  // NativeStackDef.id, 0 when none was taken
  uint32_t python_stack;  // PythonStackDef.id, 0 when the thread ran no Python code
};
static_assert(sizeof(CallStackRecord) == 24);

enum StackDefFlags : uint16_t {
  kStackTruncated = 1u << 0,  // the stack was deeper than the configured depth
};

// Followed by frame_count uint64 return addresses, innermost (the caller of
// the traced API) first. Frames inside libproflaunch itself are left out.
struct NativeStackDefRecord {
  RecordHeader header;
  uint32_t id;  // > 0; unique within the section
  uint16_t frame_count;
  uint16_t flags;  // StackDefFlags
};
static_assert(sizeof(NativeStackDefRecord) == 12);

// One Python frame of a PythonStackDef.
struct PythonFrame {
  uint32_t file_string;      // StringDef id: co_filename
  uint32_t function_string;  // StringDef id: co_qualname
  int32_t line;              // -1 when unknown
  uint32_t flags;            // PythonFrameFlags
};
static_assert(sizeof(PythonFrame) == 16);

enum PythonFrameFlags : uint32_t {
  // The interpreter was entered from C at this frame: in the native stack,
  // this frame and the ones above it (towards the leaf) run in one
  // _PyEval_EvalFrameDefault call.
  kPythonFrameEntry = 1u << 0,
};

// Followed by frame_count PythonFrame, innermost first.
struct PythonStackDefRecord {
  RecordHeader header;
  uint32_t id;  // > 0; unique within the section (its own id space)
  uint16_t frame_count;
  uint16_t flags;  // StackDefFlags
};
static_assert(sizeof(PythonStackDefRecord) == 12);

// A loaded ELF object: the executable, a shared library, the vDSO. Written at
// start and whenever the set of loaded objects changes, always before any
// NativeStackDef whose addresses fall in it. Followed by build_id_bytes of
// the GNU build id.
struct ModuleDefRecord {
  RecordHeader header;
  uint32_t path_string;  // StringDef id: the file as the loader opened it
  uint64_t load_bias;    // run-time address = load_bias + ELF virtual address
  uint64_t start;        // lowest address of its loaded segments
  uint64_t end;          // one past the highest
  uint16_t flags;        // ModuleFlags
  uint8_t build_id_bytes;
  uint8_t reserved;
};
static_assert(sizeof(ModuleDefRecord) == 36);

enum ModuleFlags : uint16_t {
  kModuleUnloaded = 1u << 0,  // the object at [start, end) was unloaded (dlclose)
};

// A name for one return address of a NativeStackDef of the same section.
// An address inside inlined code has several: inline_depth 0 is the function
// whose code holds the address, 1 the function it was inlined into, and so on
// out to the function that was really called.
struct SymbolDefRecord {
  RecordHeader header;
  uint32_t function_string;  // StringDef id: demangled name, 0 when unknown
  uint64_t address;          // as in the NativeStackDef
  uint32_t file_string;      // StringDef id: source file, 0 when unknown
  uint32_t line;             // 0 when unknown
  uint16_t inline_depth;
  uint16_t flags;  // SymbolFlags
  uint32_t reserved;
};
static_assert(sizeof(SymbolDefRecord) == 32);

enum SymbolFlags : uint16_t {
  kSymbolFromDebugInfo = 1u << 0,  // file and line come from DWARF
  kSymbolInlined = 1u << 1,        // this frame was inlined into the next depth
};

// ---- What the CPU was doing ------------------------------------------------
//
// CPU samples: each thread is sampled on its own CPU-time clock (a thread that
// is blocked takes no sample). The thread is the enclosing ThreadBatch's.

enum CpuSampleFlags : uint16_t {
  // The native stack starts at the interrupted instruction: its first
  // address is that instruction + 1 (so that, like every other address of a
  // NativeStackDef, address - 1 lies inside the instruction).
  kCpuSampleLeafIsPc = 1u << 0,
  // The thread was inside a traced GPU/collective/NVTX call when sampled.
  kCpuSampleInTracedCall = 1u << 1,
};

struct CpuSampleRecord {
  RecordHeader header;
  uint16_t flags;  // CpuSampleFlags
  uint16_t reserved;
  uint64_t time_ns;        // CLOCK_MONOTONIC
  uint64_t thread_cpu_ns;  // the thread's CPU time (CLOCK_THREAD_CPUTIME_ID) at the sample
  uint32_t native_stack;   // NativeStackDef.id, 0 when none was taken
  uint32_t python_stack;   // PythonStackDef.id, 0 when the thread ran no Python code
  // Sampling periods of CPU time this sample stands for: 1 + the timer's
  // overruns. The kernel checks CPU-time timers at its tick (CONFIG_HZ, often
  // 250), so at 1 kHz one signal comes per tick and stands for ~4 periods.
  uint32_t periods;
};
static_assert(sizeof(CpuSampleRecord) == 36);

enum class CpuSamplingMechanism : uint8_t {
  kNone = 0,
  kThreadCpuTimer = 1,  // timer_create on each thread's CPU-time clock, SIGEV_THREAD_ID
  kPerfEvent = 2,       // perf_event_open on each thread
};

enum class CpuSamplingState : uint8_t {
  kOff = 0,          // --cpu-sampling=off
  kOn = 1,
  kSteppedBack = 2,  // the program installed a handler for the sampling signal
  kUnavailable = 3,  // the timers could not be created (the reason is in the log)
};

// Per process, when sampling starts or changes state (and at section start).
struct CpuSamplingInfoRecord {
  RecordHeader header;
  uint32_t hz;          // samples per second of each thread's CPU time
  uint8_t mechanism;    // CpuSamplingMechanism
  uint8_t state;        // CpuSamplingState
  uint8_t signal_number;
  uint8_t reserved;
  uint32_t reserved2;
  uint64_t time_ns;     // CLOCK_MONOTONIC: when this state began
};
static_assert(sizeof(CpuSamplingInfoRecord) == 24);

// What a blocking call waited on.
enum class WaitObjectKind : uint8_t {
  kNone = 0,       // a sleep
  kMutex = 1,      // object: the mutex's address
  kCondition = 2,  // object: the condition variable's address
  kSemaphore = 3,
  kThread = 4,     // pthread_join: object is the pthread_t
  kPipe = 5,       // object: the file descriptor (for poll/select: the first one)
  kSocket = 6,
  kFile = 7,
  kCharDevice = 8,
  kEventFd = 9,
  kOtherFd = 10,
  kChildProcess = 11,  // waitpid: object is the pid asked for
  kFutex = 12,         // syscall(SYS_futex): object is the futex word's address
  kEpoll = 13,         // object: the epoll descriptor
};

// A libc call that blocked longer than --osrt-threshold, on the calling
// thread (ThreadBatch). span.api names the call (ApiDef, domain kOsRuntime);
// span.result is its return value (clamped to int32). A CallStack with point
// kBlocking follows when stacks are on.
struct BlockingCallRecord {
  RecordHeader header;
  uint8_t object_kind;  // WaitObjectKind
  uint8_t reserved[3];
  ApiSpan span;
  uint64_t object;  // see WaitObjectKind
  int32_t error;    // errno when the call failed, 0 otherwise
  uint32_t reserved2;
};
static_assert(sizeof(BlockingCallRecord) == 56);

// ---- Device metrics (224-239, definition 8) ---------------------------------
//
// Written by the launcher's sampler (NVML, ROCm SMI) into a section of its
// own (ProcessInfo flag kProcessDeviceSampler) with one DeviceInfo per
// sampled device: `device` below is that DeviceInfo's ordinal, and the
// device's UUID is how a reader finds the same device in the traced
// processes' sections (each numbers devices as it sees them).

enum class GpuMetricKind : uint8_t {
  kGauge = 0,    // a value that holds until the next sample of the metric
  kInstant = 1,  // an event at the sample's time (an XID error: value is its code;
                 // ECC errors: value is how many new ones)
};

enum class GpuMetricSource : uint8_t { kUnknown = 0, kNvml = 1, kRocmSmi = 2, kCuptiPmSampling = 3 };

// One metric of one device. unsupported_reason_string != 0: the device does
// not have it (the reason, e.g. NVML's "Not Supported"), and no sample follows.
struct GpuMetricDefRecord {
  RecordHeader header;
  uint32_t metric;  // > 0, unique within the section; GpuMetricSample.metric
  int32_t device;   // the DeviceInfo of this section
  uint8_t kind;     // GpuMetricKind
  uint8_t source;   // GpuMetricSource
  uint16_t link;    // NVLink / XGMI link of a per-link metric, 0xFFFF otherwise
  uint32_t name_string;  // "gpu_utilization", "sm_clock", ... (formats/README.md)
  uint32_t unit_string;  // "%", "bytes", "MHz", "mW", "C", "KiB/s", "bitmask", ""
  uint32_t unsupported_reason_string;
};
static_assert(sizeof(GpuMetricDefRecord) == 28);

// The value of a metric at time_ns. A gauge holds until the next sample of
// its metric. Rates (utilization, throughput) are written at every reading
// and cover the time since the previous sample; other gauges are written
// when they change (and at the sampler's first and last reading).
struct GpuMetricSampleRecord {
  RecordHeader header;
  uint32_t metric;   // GpuMetricDef.metric
  uint64_t time_ns;  // CLOCK_MONOTONIC ns when it was read
  uint64_t value;    // in the definition's unit
};
static_assert(sizeof(GpuMetricSampleRecord) == 24);

#pragma pack(pop)

// Maps a record struct to its kind, for typed writers and readers.
template <typename T> struct RecordKindOf;
#define PROFLAUNCH_RECORD_KIND_OF(name, number, chunk, first_bytes, span) \
  template <> struct RecordKindOf<name##Record> {                     \
    static constexpr RecordKind value = RecordKind::k##name;          \
  };
PROFLAUNCH_RECORD_KINDS(PROFLAUNCH_RECORD_KIND_OF)
#undef PROFLAUNCH_RECORD_KIND_OF

// Fills a fixed-size record's header. Variable-size records set `bytes` themselves.
template <typename T>
constexpr RecordHeader header_for() {
  return RecordHeader{static_cast<uint16_t>(RecordKindOf<T>::value),
                      static_cast<uint16_t>(sizeof(T))};
}

}  // namespace proflaunch::format
