#include "tools/proftrace/sql/schema.h"

namespace proflaunch::tools::sql {

// Conventions: every table has an INTEGER PRIMARY KEY `id` and refers to
// others by `<table>_id`; times are integer ns of CLOCK_MONOTONIC on the
// traced host (the trace's clock); 64-bit handles keep their bits (negative
// above 2^63); enumerations are lower-case text.
const std::string_view kCreateTables = R"sql(
CREATE TABLE metadata (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
CREATE TABLE processes (
  id INTEGER PRIMARY KEY,
  section_id INTEGER NOT NULL,
  input_path TEXT NOT NULL,
  pid INTEGER, ppid INTEGER,
  parent_process_id INTEGER REFERENCES processes(id),
  host TEXT, command_line TEXT, executable TEXT,
  rank INTEGER, local_rank INTEGER, world_size INTEGER,
  forked INTEGER NOT NULL, after_exec INTEGER NOT NULL,
  start_ns INTEGER, start_realtime_ns INTEGER,
  end_ns INTEGER, records_dropped INTEGER);
CREATE TABLE threads (
  id INTEGER PRIMARY KEY,
  process_id INTEGER NOT NULL REFERENCES processes(id),
  tid INTEGER NOT NULL, name TEXT);
CREATE TABLE devices (
  id INTEGER PRIMARY KEY,
  process_id INTEGER NOT NULL REFERENCES processes(id),
  device INTEGER NOT NULL, vendor TEXT, name TEXT,
  multiprocessor_count INTEGER, total_memory_bytes INTEGER, uuid TEXT);
CREATE TABLE apis (id INTEGER PRIMARY KEY, name TEXT NOT NULL, domain TEXT NOT NULL);
CREATE TABLE functions (id INTEGER PRIMARY KEY, mangled_name TEXT NOT NULL, name TEXT NOT NULL);
CREATE TABLE stacks (
  id INTEGER PRIMARY KEY,
  process_id INTEGER NOT NULL REFERENCES processes(id),
  frame_count INTEGER NOT NULL, truncated INTEGER NOT NULL);
CREATE TABLE frames (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE stack_frames (
  stack_id INTEGER NOT NULL REFERENCES stacks(id),
  depth INTEGER NOT NULL,
  frame_id INTEGER NOT NULL REFERENCES frames(id),
  PRIMARY KEY (stack_id, depth)) WITHOUT ROWID;
CREATE TABLE api_calls (
  id INTEGER PRIMARY KEY,
  process_id INTEGER NOT NULL REFERENCES processes(id),
  thread_id INTEGER REFERENCES threads(id),
  api_id INTEGER NOT NULL REFERENCES apis(id),
  record TEXT NOT NULL,
  begin_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,
  correlation_id INTEGER NOT NULL, result INTEGER NOT NULL, flags INTEGER NOT NULL,
  captured INTEGER NOT NULL, carried INTEGER NOT NULL,
  stack_id INTEGER REFERENCES stacks(id));
CREATE TABLE api_counts (
  id INTEGER PRIMARY KEY,
  process_id INTEGER NOT NULL REFERENCES processes(id),
  thread_id INTEGER REFERENCES threads(id),
  api_id INTEGER NOT NULL REFERENCES apis(id),
  count INTEGER NOT NULL, first_ns INTEGER NOT NULL, last_ns INTEGER NOT NULL);
CREATE TABLE kernels (
  id INTEGER PRIMARY KEY,
  api_call_id INTEGER NOT NULL REFERENCES api_calls(id),
  process_id INTEGER NOT NULL REFERENCES processes(id),
  correlation_id INTEGER NOT NULL,
  device INTEGER NOT NULL, device_id INTEGER REFERENCES devices(id),
  stream INTEGER NOT NULL,
  function_id INTEGER REFERENCES functions(id),
  grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,
  block_x INTEGER, block_y INTEGER, block_z INTEGER,
  shared_bytes INTEGER, launch_flags INTEGER NOT NULL, host_function INTEGER NOT NULL);
CREATE TABLE copies (
  id INTEGER PRIMARY KEY,
  api_call_id INTEGER NOT NULL REFERENCES api_calls(id),
  process_id INTEGER NOT NULL REFERENCES processes(id),
  correlation_id INTEGER NOT NULL,
  device INTEGER NOT NULL, device_id INTEGER REFERENCES devices(id),
  stream INTEGER NOT NULL, bytes INTEGER NOT NULL,
  direction TEXT NOT NULL, src_kind TEXT NOT NULL, dst_kind TEXT NOT NULL,
  src_device INTEGER, dst_device INTEGER, peer_device INTEGER,
  src_address INTEGER, dst_address INTEGER);
CREATE TABLE memsets (
  id INTEGER PRIMARY KEY,
  api_call_id INTEGER NOT NULL REFERENCES api_calls(id),
  process_id INTEGER NOT NULL REFERENCES processes(id),
  correlation_id INTEGER NOT NULL,
  device INTEGER NOT NULL, device_id INTEGER REFERENCES devices(id),
  stream INTEGER NOT NULL, bytes INTEGER NOT NULL,
  value INTEGER, element_bytes INTEGER, dst_kind TEXT NOT NULL, dst_address INTEGER);
CREATE TABLE memory_operations (
  id INTEGER PRIMARY KEY,
  api_call_id INTEGER NOT NULL REFERENCES api_calls(id),
  process_id INTEGER NOT NULL REFERENCES processes(id),
  correlation_id INTEGER NOT NULL,
  device INTEGER NOT NULL, device_id INTEGER REFERENCES devices(id),
  kind TEXT NOT NULL, action TEXT NOT NULL,
  address INTEGER, bytes INTEGER NOT NULL, stream INTEGER, handle INTEGER,
  pool_reserved_bytes INTEGER, pitch_or_offset_bytes INTEGER, flags INTEGER);
CREATE TABLE gpu_activities (
  id INTEGER PRIMARY KEY,
  process_id INTEGER NOT NULL REFERENCES processes(id),
  correlation_id INTEGER NOT NULL,
  device INTEGER NOT NULL, device_id INTEGER REFERENCES devices(id),
  stream INTEGER NOT NULL, kind TEXT NOT NULL, source TEXT NOT NULL,
  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, graph_node INTEGER);
CREATE TABLE graph_nodes (
  id INTEGER PRIMARY KEY,
  process_id INTEGER NOT NULL REFERENCES processes(id),
  graph_exec INTEGER NOT NULL, graph INTEGER NOT NULL, node INTEGER NOT NULL,
  type TEXT NOT NULL,
  function_id INTEGER REFERENCES functions(id),
  grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,
  block_x INTEGER, block_y INTEGER, block_z INTEGER,
  shared_bytes INTEGER, bytes INTEGER);
CREATE TABLE nvtx_ranges (
  id INTEGER PRIMARY KEY,
  process_id INTEGER NOT NULL REFERENCES processes(id),
  thread_id INTEGER REFERENCES threads(id),
  kind TEXT NOT NULL, domain TEXT, name TEXT NOT NULL,
  begin_ns INTEGER NOT NULL, end_ns INTEGER);
CREATE TABLE communicators (
  id INTEGER PRIMARY KEY,
  api_call_id INTEGER NOT NULL REFERENCES api_calls(id),
  process_id INTEGER NOT NULL REFERENCES processes(id),
  device INTEGER, comm INTEGER NOT NULL, comm_id INTEGER NOT NULL, parent_comm_id INTEGER,
  rank INTEGER, nranks INTEGER, action TEXT NOT NULL, library TEXT NOT NULL);
CREATE TABLE collectives (
  id INTEGER PRIMARY KEY,
  api_call_id INTEGER NOT NULL REFERENCES api_calls(id),
  process_id INTEGER NOT NULL REFERENCES processes(id),
  correlation_id INTEGER NOT NULL,
  device INTEGER, comm INTEGER NOT NULL, comm_id INTEGER NOT NULL, sequence INTEGER NOT NULL,
  op TEXT NOT NULL, count INTEGER NOT NULL, bytes INTEGER NOT NULL,
  datatype INTEGER, reduction INTEGER, root INTEGER, rank INTEGER, nranks INTEGER,
  stream INTEGER, group_id INTEGER);
CREATE TABLE collective_groups (
  id INTEGER PRIMARY KEY,
  api_call_id INTEGER NOT NULL REFERENCES api_calls(id),
  process_id INTEGER NOT NULL REFERENCES processes(id),
  correlation_id INTEGER NOT NULL,
  device INTEGER, group_id INTEGER NOT NULL, stream INTEGER, members INTEGER NOT NULL);
CREATE TABLE lost (
  id INTEGER PRIMARY KEY,
  process_id INTEGER NOT NULL REFERENCES processes(id),
  thread_id INTEGER REFERENCES threads(id),
  reason TEXT NOT NULL, first_ns INTEGER, last_ns INTEGER, count INTEGER NOT NULL);
CREATE TABLE gpu_metrics (
  id INTEGER PRIMARY KEY,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  metric TEXT NOT NULL, unit TEXT NOT NULL, link INTEGER, kind TEXT NOT NULL,
  time_ns INTEGER NOT NULL, value INTEGER NOT NULL);
CREATE TABLE gpu_metrics_unsupported (
  id INTEGER PRIMARY KEY,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  metric TEXT NOT NULL, reason TEXT NOT NULL);
-- What the CPU was doing: each thread's samples on its CPU-time clock (a
-- stack, root to leaf in stack_frames with depth 0 the running frame), the
-- libc calls where it blocked (api_id names the call; object_kind what it
-- waited on; object the descriptor, address or pid), each process's
-- sampling state.
CREATE TABLE cpu_samples (
  id INTEGER PRIMARY KEY,
  process_id INTEGER NOT NULL REFERENCES processes(id),
  thread_id INTEGER REFERENCES threads(id),
  time_ns INTEGER NOT NULL, thread_cpu_ns INTEGER NOT NULL,
  in_traced_call INTEGER NOT NULL,
  stack_id INTEGER REFERENCES stacks(id));
CREATE TABLE blocking_calls (
  id INTEGER PRIMARY KEY,
  process_id INTEGER NOT NULL REFERENCES processes(id),
  thread_id INTEGER REFERENCES threads(id),
  api_id INTEGER NOT NULL REFERENCES apis(id),
  begin_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,
  object_kind TEXT NOT NULL, object INTEGER NOT NULL,
  result INTEGER NOT NULL, error INTEGER NOT NULL,
  stack_id INTEGER REFERENCES stacks(id));
CREATE TABLE cpu_sampling (
  id INTEGER PRIMARY KEY,
  process_id INTEGER NOT NULL REFERENCES processes(id),
  time_ns INTEGER NOT NULL, hz INTEGER NOT NULL,
  mechanism TEXT NOT NULL, state TEXT NOT NULL, signal_number INTEGER NOT NULL);
)sql";

const std::string_view kCreateIndexesAndViews = R"sql(
CREATE INDEX api_calls_by_correlation ON api_calls (process_id, correlation_id);
CREATE INDEX gpu_activities_by_correlation ON gpu_activities (process_id, correlation_id);
CREATE INDEX kernels_by_correlation ON kernels (process_id, correlation_id);
CREATE INDEX copies_by_correlation ON copies (process_id, correlation_id);
CREATE INDEX memsets_by_correlation ON memsets (process_id, correlation_id);
CREATE INDEX threads_by_process ON threads (process_id, tid);
CREATE INDEX graph_nodes_by_node ON graph_nodes (process_id, node);
CREATE INDEX cpu_samples_by_time ON cpu_samples (thread_id, time_ns);
CREATE INDEX blocking_calls_by_time ON blocking_calls (thread_id, begin_ns);
-- Each launch, copy and memset with its GPU time: the GpuActivity of the same
-- process and correlation id. Work without GPU time (timing off, lost, a
-- launch captured into a graph) is not in these views.
CREATE VIEW kernels_with_gpu_time AS
  SELECT k.*, g.start_ns AS gpu_start_ns, g.end_ns AS gpu_end_ns,
         max(g.end_ns - g.start_ns, 0) AS gpu_duration_ns, g.id AS gpu_activity_id
  FROM kernels k JOIN gpu_activities g
    ON g.process_id = k.process_id AND g.correlation_id = k.correlation_id AND g.kind = 'kernel';
CREATE VIEW copies_with_gpu_time AS
  SELECT c.*, g.start_ns AS gpu_start_ns, g.end_ns AS gpu_end_ns,
         max(g.end_ns - g.start_ns, 0) AS gpu_duration_ns, g.id AS gpu_activity_id
  FROM copies c JOIN gpu_activities g
    ON g.process_id = c.process_id AND g.correlation_id = c.correlation_id AND g.kind = 'memcpy';
-- Each kernel a graph launch ran, timed node by node (CUPTI): the node's
-- kernel and shape with its GPU time and the launch's correlation id. A node
-- instantiated into several executable graphs is taken from its first row.
CREATE VIEW graph_kernels_with_gpu_time AS
  SELECT n.process_id, n.graph_exec, n.node, n.function_id, n.grid_x, n.grid_y, n.grid_z,
         n.block_x, n.block_y, n.block_z, n.shared_bytes, g.correlation_id, g.device, g.device_id, g.stream,
         g.start_ns AS gpu_start_ns, g.end_ns AS gpu_end_ns,
         max(g.end_ns - g.start_ns, 0) AS gpu_duration_ns, g.id AS gpu_activity_id
  FROM gpu_activities g JOIN graph_nodes n
    ON n.id = (SELECT min(id) FROM graph_nodes WHERE process_id = g.process_id AND node = g.graph_node)
  WHERE g.kind = 'kernel' AND g.graph_node IS NOT NULL;
CREATE VIEW memsets_with_gpu_time AS
  SELECT m.*, g.start_ns AS gpu_start_ns, g.end_ns AS gpu_end_ns,
         max(g.end_ns - g.start_ns, 0) AS gpu_duration_ns, g.id AS gpu_activity_id
  FROM memsets m JOIN gpu_activities g
    ON g.process_id = m.process_id AND g.correlation_id = m.correlation_id AND g.kind = 'memset';
)sql";

}  // namespace proflaunch::tools::sql
