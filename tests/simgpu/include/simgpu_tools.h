/* simgpu_tools.h: the simulated driver's interface for tools libraries.
 *
 * The real CUPTI reaches its driver through private export tables; the
 * simulated CUPTI (tests/simgpu/cupti) reaches the simulated driver through
 * this table instead. It says what a tools library needs and nothing more:
 *
 *   - every driver API call, at entry and exit, with the correlation id of
 *     the outermost API call on the thread (a runtime call that calls the
 *     driver shares its id with the driver calls it makes);
 *   - the runtime's API calls, which the simulated runtime reports here;
 *   - each kernel, copy and memset once the device completed it, with its
 *     modelled start and end (CLOCK_MONOTONIC ns), the correlation id of the
 *     call that submitted it, and for work a graph launch ran, the graph's
 *     and the node's ids;
 *   - contexts and streams as they are created and destroyed.
 *
 * Nothing in it knows which tool is attached. One set of callbacks at a time;
 * setting a callback to NULL detaches it. Resolve simgpuGetToolsInterface with
 * dlsym from libcuda.so.1: a real driver does not have it.
 */
#ifndef SIMGPU_TOOLS_H
#define SIMGPU_TOOLS_H

#include <cuda.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIMGPU_TOOLS_VERSION 1

enum SimgpuToolsDomain { SIMGPU_TOOLS_DRIVER = 1, SIMGPU_TOOLS_RUNTIME = 2 };
enum SimgpuToolsSite { SIMGPU_TOOLS_ENTER = 0, SIMGPU_TOOLS_EXIT = 1 };

typedef struct SimgpuToolsApiCall {
  int domain;              /* SimgpuToolsDomain */
  int site;                /* SimgpuToolsSite */
  const char* name;        /* the entry point's exported name ("cuLaunchKernel", "cudaMemcpyAsync") */
  uint32_t correlation_id; /* of the outermost call on this thread */
  int result;              /* exit: CUresult (driver) or cudaError_t (runtime) */
  CUcontext context;       /* current on the calling thread at entry, or NULL */
  uint64_t start_ns;       /* entry time (exit: still the entry's), CLOCK_MONOTONIC */
  uint64_t end_ns;         /* exit only */
  void* user_slot;         /* enter: the tool may store a value here; exit: the same value */
} SimgpuToolsApiCall;

enum SimgpuToolsWorkKind { SIMGPU_TOOLS_KERNEL = 1, SIMGPU_TOOLS_MEMCPY = 2, SIMGPU_TOOLS_MEMSET = 3 };

/* Copy directions, named after the memory on each side. */
enum SimgpuToolsCopyKind {
  SIMGPU_TOOLS_COPY_HTOD = 1,
  SIMGPU_TOOLS_COPY_DTOH = 2,
  SIMGPU_TOOLS_COPY_DTOD = 3,
  SIMGPU_TOOLS_COPY_HTOH = 4,
  SIMGPU_TOOLS_COPY_PTOP = 5
};
enum SimgpuToolsMemoryKind {
  SIMGPU_TOOLS_PAGEABLE = 1,
  SIMGPU_TOOLS_PINNED = 2,
  SIMGPU_TOOLS_DEVICE = 3,
  SIMGPU_TOOLS_MANAGED = 4
};

typedef struct SimgpuToolsWork {
  int kind;                /* SimgpuToolsWorkKind */
  uint32_t correlation_id; /* the submitting call's; a graph's nodes carry the graph launch's */
  uint64_t start_ns;       /* CLOCK_MONOTONIC, modelled */
  uint64_t end_ns;
  int device;
  uint32_t context_id;
  uint32_t stream_id;      /* the stream it ran on: a graph's node runs on one of the graph's lanes */
  uint32_t graph_id;       /* 0 unless a graph launch ran it */
  uint64_t graph_node_id;  /* 0 unless a graph launch ran it */
  /* kernels */
  const char* name;        /* mangled; valid for the callback's duration */
  unsigned grid[3];
  unsigned block[3];
  unsigned dynamic_shared_bytes;
  unsigned static_shared_bytes;
  unsigned registers;
  /* copies and memsets */
  uint64_t bytes;
  int copy_kind;           /* SimgpuToolsCopyKind */
  int src_kind;            /* SimgpuToolsMemoryKind */
  int dst_kind;
} SimgpuToolsWork;

enum SimgpuToolsResourceEvent {
  SIMGPU_TOOLS_CONTEXT_CREATED = 1,
  SIMGPU_TOOLS_CONTEXT_DESTROYING = 2,
  SIMGPU_TOOLS_STREAM_CREATED = 3,
  SIMGPU_TOOLS_STREAM_DESTROYING = 4
};

/* Memory the driver allocated or released for the program: device
   (cuMemAlloc*, pitch), managed, stream-ordered pool blocks (cuMemAllocAsync:
   is_async, pool set) and pinned host memory (cuMemAllocHost, cuMemHostAlloc).
   Registered host memory, VMM mappings and module globals are not reported. */
enum SimgpuToolsMemoryEvent { SIMGPU_TOOLS_MEMORY_ALLOCATED = 1, SIMGPU_TOOLS_MEMORY_RELEASED = 2 };

typedef struct SimgpuToolsMemory {
  int event;               /* SimgpuToolsMemoryEvent */
  int kind;                /* SimgpuToolsMemoryKind */
  uint64_t address;
  uint64_t bytes;
  uint64_t timestamp_ns;   /* CLOCK_MONOTONIC */
  int device;              /* -1 for host memory */
  uint32_t context_id;     /* 0 when not bound to a context */
  uint32_t correlation_id; /* the API call that did it (0 outside one: teardown) */
  int is_async;            /* a stream-ordered pool block */
  uint64_t pool;           /* the pool's handle value, 0 if none */
} SimgpuToolsMemory;

typedef void (*SimgpuToolsApiCallback)(void* user, SimgpuToolsApiCall* call);
typedef void (*SimgpuToolsMemoryCallback)(void* user, const SimgpuToolsMemory* memory);
typedef void (*SimgpuToolsWorkCallback)(void* user, const SimgpuToolsWork* work);
typedef void (*SimgpuToolsResourceCallback)(void* user, int event, CUcontext context, CUstream stream);
typedef void (*SimgpuToolsGraphCallback)(void* user, CUcontext context, CUgraphExec exec, CUgraph original_graph,
                                         CUgraphNode node, CUgraphNode original, CUgraphNodeType type);

typedef struct SimgpuToolsInterface {
  uint32_t version;
  uint32_t size;
  /* Called on the calling thread at entry and exit of every driver API call,
     and of every runtime call the runtime reports. */
  void (*set_api_callback)(SimgpuToolsApiCallback callback, void* user);
  /* Called on the device's worker thread once the work is complete. */
  void (*set_work_callback)(SimgpuToolsWorkCallback callback, void* user);
  void (*set_resource_callback)(SimgpuToolsResourceCallback callback, void* user);
  /* The runtime's side: an API call begins (returns its correlation id) and ends. */
  uint32_t (*runtime_enter)(const char* name, void** user_slot);
  void (*runtime_exit)(const char* name, int result, void* user_slot);
  /* Ids as the work records carry them; 0 for an unknown handle. */
  uint32_t (*context_id)(CUcontext context);
  uint32_t (*stream_id)(CUstream stream);
  uint32_t (*graph_id)(CUgraph graph);
  uint64_t (*graph_node_id)(CUgraphNode node);
  /* The correlation id the next outermost call on this thread will get is
     larger than every id handed out so far. */
  uint32_t (*last_correlation_id)(void);
  /* Called on the calling thread right after memory was allocated, or right
     before it is released (present when `size` covers it). */
  void (*set_memory_callback)(SimgpuToolsMemoryCallback callback, void* user);
  /* Called on the instantiating thread, inside cuGraphInstantiate, once per
     node of the executable graph: `node` is the clone the executable graph
     runs (its id is what a graph launch's work records carry), `original`
     the node of the graph it was cloned from (present when `size` covers it). */
  void (*set_graph_callback)(SimgpuToolsGraphCallback callback, void* user);
} SimgpuToolsInterface;

/* Returns 0 and the interface, or -1 if `version` is not supported. */
int simgpuGetToolsInterface(uint32_t version, const SimgpuToolsInterface** out);
typedef int (*PFN_simgpuGetToolsInterface)(uint32_t version, const SimgpuToolsInterface** out);

#ifdef __cplusplus
}
#endif

#endif /* SIMGPU_TOOLS_H */
