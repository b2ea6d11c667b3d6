// The data movement of every operation. Device memory is host memory, so the
// ranks exchange data through their staging slots in the shared segment:
// each step, every rank copies its contribution into its slot, all meet
// (barrier), each computes its output from the slots, and all meet again
// before the slots are reused. Outputs are written only after the first
// barrier, so in-place operations are safe. Point-to-point transfers go
// through one mailbox per ordered pair, progressed together so that a group
// of sends and receives in a ring cannot deadlock.
#include <algorithm>
#include <cstring>

#include "operation.h"
#include "reduce.h"

namespace simnccl {
namespace {

struct Step {
  CommState& comm;
  int64_t* all_arrived_ns;
  std::string& error;

  ncclResult_t meet() {
    const ncclResult_t result = comm.segment->barrier(comm.rank, collective_timeout_ns(), error);
    if (result == ncclSuccess && *all_arrived_ns < 0)
      *all_arrived_ns = comm.segment->header().last_arrival_ns.load(std::memory_order_relaxed);
    return result;
  }
};

char* at(const void* base, size_t elements, size_t element_bytes) {
  return static_cast<char*>(const_cast<void*>(base)) + elements * element_bytes;
}

// Reduces `count` elements at `offset_bytes` of every slot into `out`.
void reduce_slots(const Operation& op, Segment& segment, size_t offset_bytes, size_t count, void* out) {
  const size_t es = datatype_bytes(op.datatype);
  std::memmove(out, segment.slot(0) + offset_bytes, count * es);
  for (int r = 1; r < segment.nranks(); ++r) reduce_into(out, segment.slot(r) + offset_bytes, count, op.datatype, op.op);
  if (op.op == ncclAvg) finish_average(out, count, op.datatype, segment.nranks());
}

ncclResult_t run_collective(const Operation& op, Step& step) {
  CommState& comm = *op.comm;
  Segment& segment = *comm.segment;
  const int me = comm.rank;
  const int n = comm.nranks;
  const size_t es = datatype_bytes(op.datatype);
  // Elements per step: whole-buffer operations use the slot for one range,
  // per-block operations (reduce-scatter, all-to-all, scatter) put one
  // block per rank in it.
  const bool per_block = op.kind == OpKind::kReduceScatter || op.kind == OpKind::kAlltoAll || op.kind == OpKind::kScatter;
  const size_t chunk = std::max<size_t>(1, kSlotBytes / (es * (per_block ? n : 1)));
  for (size_t offset = 0; offset < op.count; offset += chunk) {
    const size_t m = std::min(chunk, op.count - offset);
    char* mine = segment.slot(me);
    switch (op.kind) {
      case OpKind::kAllReduce:
      case OpKind::kReduce:
      case OpKind::kAllGather:
      case OpKind::kGather: std::memcpy(mine, at(op.send, offset, es), m * es); break;
      case OpKind::kBroadcast:
        if (me == op.root) std::memcpy(mine, at(op.send, offset, es), m * es);
        break;
      case OpKind::kReduceScatter:
      case OpKind::kAlltoAll:
        for (int b = 0; b < n; ++b) std::memcpy(mine + b * m * es, at(op.send, b * op.count + offset, es), m * es);
        break;
      case OpKind::kScatter:
        if (me == op.root)
          for (int b = 0; b < n; ++b) std::memcpy(mine + b * m * es, at(op.send, b * op.count + offset, es), m * es);
        break;
      default: break;
    }
    if (ncclResult_t result = step.meet(); result != ncclSuccess) return result;
    switch (op.kind) {
      case OpKind::kAllReduce: reduce_slots(op, segment, 0, m, at(op.recv, offset, es)); break;
      case OpKind::kReduce:
        if (me == op.root) reduce_slots(op, segment, 0, m, at(op.recv, offset, es));
        break;
      case OpKind::kBroadcast: std::memmove(at(op.recv, offset, es), segment.slot(op.root), m * es); break;
      case OpKind::kAllGather:
      case OpKind::kGather:
        if (op.kind == OpKind::kAllGather || me == op.root)
          for (int r = 0; r < n; ++r) std::memmove(at(op.recv, r * op.count + offset, es), segment.slot(r), m * es);
        break;
      case OpKind::kReduceScatter: reduce_slots(op, segment, me * m * es, m, at(op.recv, offset, es)); break;
      case OpKind::kAlltoAll:
        for (int r = 0; r < n; ++r)
          std::memmove(at(op.recv, r * op.count + offset, es), segment.slot(r) + me * m * es, m * es);
        break;
      case OpKind::kScatter:
        std::memmove(at(op.recv, offset, es), segment.slot(op.root) + me * m * es, m * es);
        break;
      default: break;
    }
    if (ncclResult_t result = step.meet(); result != ncclSuccess) return result;
  }
  return ncclSuccess;
}

struct Transfer {
  const Operation* op;
  size_t done_bytes = 0;
  size_t total_bytes = 0;
};

ncclResult_t run_point_to_point(std::vector<Transfer>& transfers, CommState& comm, int64_t* first_ns,
                                std::string& error) {
  Segment& segment = *comm.segment;
  const int me = comm.rank;
  int64_t deadline = monotonic_ns() + collective_timeout_ns();
  // A failed wait (a peer gone, the deadline) gets one more progress pass:
  // the peer may have delivered everything and exited just before the check.
  ncclResult_t failing = ncclSuccess;
  for (;;) {
    const uint32_t seen = segment.header().doorbell[me].load(std::memory_order_acquire);
    bool progressed = false, finished = true;
    uint64_t waiting_on = 0;  // peers of the unfinished transfers
    for (Transfer& t : transfers) {
      if (t.done_bytes >= t.total_bytes) continue;
      finished = false;
      const int peer = t.op->root;
      waiting_on |= uint64_t{1} << peer;
      if (t.op->kind == OpKind::kSend) {
        Mailbox& box = segment.mailbox(me, peer);
        if (box.full.load(std::memory_order_acquire) != 0) continue;
        const size_t bytes = std::min(kMailboxBytes, t.total_bytes - t.done_bytes);
        std::memcpy(segment.mailbox_data(me, peer), static_cast<const char*>(t.op->send) + t.done_bytes, bytes);
        box.bytes = bytes;
        box.full.store(1, std::memory_order_release);
        segment.ring(peer);
        t.done_bytes += bytes;
      } else {
        Mailbox& box = segment.mailbox(peer, me);
        if (box.full.load(std::memory_order_acquire) == 0) continue;
        const size_t bytes = std::min<size_t>(box.bytes, t.total_bytes - t.done_bytes);
        std::memcpy(static_cast<char*>(t.op->recv) + t.done_bytes, segment.mailbox_data(peer, me), bytes);
        box.full.store(0, std::memory_order_release);
        segment.ring(peer);
        t.done_bytes += bytes;
      }
      progressed = true;
      if (*first_ns < 0) *first_ns = monotonic_ns();
    }
    if (finished) return ncclSuccess;
    if (failing != ncclSuccess && !progressed) return failing;
    failing = ncclSuccess;
    if (progressed) {
      deadline = monotonic_ns() + collective_timeout_ns();
      continue;
    }
    failing = segment.wait_doorbell(me, seen, deadline, waiting_on, error);
  }
}

}  // namespace

bool is_point_to_point(OpKind kind) { return kind == OpKind::kSend || kind == OpKind::kRecv; }

double bus_bytes(const Operation& op) {
  const double n = op.comm->nranks;
  const double bytes = double(op.count) * double(datatype_bytes(op.datatype));
  switch (op.kind) {
    case OpKind::kAllReduce: return bytes * 2 * (n - 1) / n;
    case OpKind::kAllGather:
    case OpKind::kReduceScatter:
    case OpKind::kAlltoAll:
    case OpKind::kGather:
    case OpKind::kScatter: return bytes * n * (n - 1) / n;
    default: return bytes;  // broadcast, reduce, send, recv
  }
}

ncclResult_t validate(const Operation& op, std::string& error) {
  if (op.comm == nullptr) {
    error = "invalid communicator";
    return ncclInvalidArgument;
  }
  if (datatype_bytes(op.datatype) == 0) {
    error = "invalid datatype " + std::to_string(int(op.datatype));
    return ncclInvalidArgument;
  }
  const bool reduces = op.kind == OpKind::kAllReduce || op.kind == OpKind::kReduce || op.kind == OpKind::kReduceScatter;
  if (reduces && !can_reduce(op.datatype, op.op)) {
    error = "reduction op " + std::to_string(int(op.op)) + " on datatype " + std::to_string(int(op.datatype)) +
            " is not supported by the simulated NCCL";
    return ncclInvalidArgument;
  }
  const bool rooted = op.kind == OpKind::kBroadcast || op.kind == OpKind::kReduce || op.kind == OpKind::kGather ||
                      op.kind == OpKind::kScatter || is_point_to_point(op.kind);
  if (rooted && (op.root < 0 || op.root >= op.comm->nranks)) {
    error = (is_point_to_point(op.kind) ? "peer " : "root ") + std::to_string(op.root) + " is not a rank of a " +
            std::to_string(op.comm->nranks) + "-rank communicator";
    return ncclInvalidArgument;
  }
  if (op.count > 0) {
    const bool needs_send = op.kind != OpKind::kRecv && !(op.kind == OpKind::kScatter && op.comm->rank != op.root) &&
                            !(op.kind == OpKind::kBroadcast && op.comm->rank != op.root);
    const bool needs_recv = op.kind != OpKind::kSend && !((op.kind == OpKind::kReduce || op.kind == OpKind::kGather) &&
                                                          op.comm->rank != op.root);
    if ((needs_send && op.send == nullptr) || (needs_recv && op.recv == nullptr)) {
      error = "null buffer";
      return ncclInvalidArgument;
    }
  }
  return ncclSuccess;
}

ncclResult_t execute(const std::vector<Operation>& ops, int64_t* all_arrived_ns, std::string& error) {
  *all_arrived_ns = -1;
  std::vector<Transfer> transfers;
  for (const Operation& op : ops) {
    if (is_point_to_point(op.kind)) {
      transfers.push_back(Transfer{&op, 0, op.count * datatype_bytes(op.datatype)});
      continue;
    }
    Step step{*op.comm, all_arrived_ns, error};
    if (ncclResult_t result = run_collective(op, step); result != ncclSuccess) return result;
  }
  if (transfers.empty()) return ncclSuccess;
  return run_point_to_point(transfers, *ops.front().comm, all_arrived_ns, error);
}

}  // namespace simnccl
