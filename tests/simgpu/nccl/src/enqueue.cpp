#include "enqueue.h"

#include <time.h>

#include <cstdlib>
#include <memory>

#include "driver.h"
#include "reduce.h"

namespace simnccl {
namespace {

struct GroupState {
  int depth = 0;
  std::vector<Operation> pending;
  ncclResult_t first_error = ncclSuccess;
};
thread_local GroupState t_group;

double env_number(const char* name, double fallback) {
  const char* text = std::getenv(name);
  char* end = nullptr;
  const double value = text != nullptr ? std::strtod(text, &end) : 0;
  return (text != nullptr && *end == '\0' && value > 0) ? value : fallback;
}

// The bandwidth model: latency + bus bytes / bus bandwidth, from the moment
// the last rank arrived. SIMNCCL_BUS_GBPS (default 100) and
// SIMNCCL_LATENCY_US (default 10).
int64_t modelled_ns(double bus_bytes) {
  static const double gbps = env_number("SIMNCCL_BUS_GBPS", 100);
  static const double latency_us = env_number("SIMNCCL_LATENCY_US", 10);
  return int64_t(latency_us * 1e3 + bus_bytes / gbps);
}

void sleep_until(int64_t deadline_ns) {
  timespec at{static_cast<time_t>(deadline_ns / 1'000'000'000), static_cast<long>(deadline_ns % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) != 0) {
  }
}

struct Work {
  std::vector<Operation> ops;
};

// Runs on the stream's worker thread when the stream reaches the collective.
void CUDA_CB run_work(void* data) {
  std::unique_ptr<Work> work(static_cast<Work*>(data));
  CommState& comm = *work->ops.front().comm;
  if (comm.async_error.load() != ncclSuccess) return;  // a broken communicator moves nothing
  int64_t arrived_ns = -1;
  std::string error;
  if (ncclResult_t result = execute(work->ops, &arrived_ns, error); result != ncclSuccess) {
    comm.fail(result, error);
    return;
  }
  double bytes = 0;
  for (const Operation& op : work->ops) bytes += bus_bytes(op);
  sleep_until((arrived_ns >= 0 ? arrived_ns : monotonic_ns()) + modelled_ns(bytes));
}

const char* type_suffix(ncclDataType_t datatype) {
  switch (datatype) {
    case ncclInt8:
    case ncclUint8: return "u8";
    case ncclInt32:
    case ncclUint32: return "u32";
    case ncclInt64:
    case ncclUint64: return "u64";
    case ncclFloat16: return "f16";
    case ncclFloat32: return "f32";
    case ncclFloat64: return "f64";
    case ncclBfloat16: return "bf16";
    default: return nullptr;
  }
}

unsigned channels_for(const std::vector<Operation>& ops) {
  size_t bytes = 0;
  for (const Operation& op : ops) bytes += op.count * datatype_bytes(op.datatype);
  return unsigned(std::min<size_t>(16, std::max<size_t>(2, bytes >> 18)));
}

ncclResult_t launch(std::vector<Operation> ops) {
  CommState& comm = *ops.front().comm;
  const CUstream stream = ops.front().stream;
  std::string error;
  const Driver* d = driver(error);
  if (d == nullptr) {
    set_last_error(error);
    return ncclUnhandledCudaError;
  }
  // NCCL launches in the communicator's context and restores the caller's.
  CUcontext saved = nullptr;
  d->ctx_get_current(&saved);
  if (saved != comm.context) d->ctx_set_current(comm.context);
  CUfunction function = nullptr;
  CUresult rc = kernel_function(*d, comm.context, kernel_name(ops), &function);
  const unsigned channels = channels_for(ops);
  if (rc == CUDA_SUCCESS) {
    auto* work = new Work{std::move(ops)};
    rc = d->launch_host_func(stream, run_work, work);
    if (rc != CUDA_SUCCESS) delete work;
  }
  if (rc == CUDA_SUCCESS) {
    alignas(16) static thread_local char arguments[4096];
    void* parameters[] = {arguments};
    rc = d->launch_kernel(function, channels, 1, 1, 512, 1, 1, 0, stream, parameters, nullptr);
  }
  if (saved != comm.context) d->ctx_set_current(saved);
  if (rc != CUDA_SUCCESS) {
    set_last_error("the CUDA driver refused the collective's work (CUresult " + std::to_string(rc) + ")");
    return ncclUnhandledCudaError;
  }
  return ncclSuccess;
}

ncclResult_t flush(std::vector<Operation> ops) {
  // One stream work per (communicator, stream), in the order of first use.
  ncclResult_t result = ncclSuccess;
  while (!ops.empty()) {
    std::vector<Operation> share, rest;
    const std::shared_ptr<CommState> comm = ops.front().comm;
    const CUstream stream = ops.front().stream;
    for (Operation& op : ops) {
      if (op.comm == comm && op.stream == stream)
        share.push_back(std::move(op));
      else
        rest.push_back(std::move(op));
    }
    if (ncclResult_t r = launch(std::move(share)); r != ncclSuccess && result == ncclSuccess) result = r;
    ops = std::move(rest);
  }
  return result;
}

}  // namespace

std::string kernel_name(const std::vector<Operation>& ops) {
  const Operation& first = ops.front();
  for (const Operation& op : ops) {
    const bool both_p2p_like = (is_point_to_point(op.kind) || op.kind == OpKind::kAlltoAll) &&
                               (is_point_to_point(first.kind) || first.kind == OpKind::kAlltoAll);
    if (op.kind != first.kind && !both_p2p_like) return "ncclDevKernel_Generic";
  }
  const char* collective = nullptr;
  switch (first.kind) {
    case OpKind::kAllReduce: collective = "AllReduce"; break;
    case OpKind::kReduceScatter: collective = "ReduceScatter"; break;
    case OpKind::kReduce: collective = "Reduce"; break;
    case OpKind::kAllGather: return "ncclDevKernel_AllGather_RING_LL";
    case OpKind::kBroadcast: return "ncclDevKernel_Broadcast_RING_LL";
    default: return "ncclDevKernel_SendRecv";  // NCCL runs these as grouped sends and receives
  }
  const char* type = type_suffix(first.datatype);
  if (first.op != ncclSum || type == nullptr) return "ncclDevKernel_Generic";
  return std::string("ncclDevKernel_") + collective + "_Sum_" + type + "_RING_LL";
}

ncclResult_t submit(const Operation& op) {
  std::string error;
  ncclResult_t result = validate(op, error);
  if (result == ncclSuccess) result = ncclResult_t(op.comm->async_error.load());
  if (result != ncclSuccess) {
    set_last_error(error.empty() ? op.comm->error_text() : error);
    if (t_group.depth > 0 && t_group.first_error == ncclSuccess) t_group.first_error = result;
    return result;
  }
  if (t_group.depth > 0) {
    t_group.pending.push_back(op);
    return ncclSuccess;
  }
  return flush({op});
}

ncclResult_t group_start() {
  ++t_group.depth;
  return ncclSuccess;
}

ncclResult_t group_end() {
  if (t_group.depth == 0) {
    set_last_error("ncclGroupEnd without ncclGroupStart");
    return ncclInvalidUsage;
  }
  if (--t_group.depth > 0) return ncclSuccess;
  std::vector<Operation> ops = std::move(t_group.pending);
  t_group.pending.clear();
  const ncclResult_t earlier = t_group.first_error;
  t_group.first_error = ncclSuccess;
  if (earlier != ncclSuccess) return earlier;  // a member was invalid: nothing is launched
  return flush(std::move(ops));
}

}  // namespace simnccl
