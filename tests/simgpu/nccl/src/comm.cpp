#include "comm.h"

#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "driver.h"

namespace simnccl {
namespace {

constexpr char kIdMagic[8] = {'S', 'I', 'M', 'N', 'C', 'C', 'L', '1'};

std::mutex g_last_error_mutex;
std::string g_last_error;

std::string hex(const void* data, size_t bytes) {
  std::string text;
  char buffer[3];
  for (size_t i = 0; i < bytes; ++i) {
    std::snprintf(buffer, sizeof buffer, "%02x", static_cast<const unsigned char*>(data)[i]);
    text += buffer;
  }
  return text;
}

// Joins the segment `name` as `rank` of `nranks`; returns once every rank
// joined (or failed).
ncclResult_t join(const std::string& name, int nranks, int rank, CUcontext context, int device, ncclComm_t* out) {
  std::string error;
  if (rank < 0 || rank >= nranks) {
    set_last_error("rank " + std::to_string(rank) + " is outside 0.." + std::to_string(nranks - 1));
    return ncclInvalidArgument;
  }
  std::shared_ptr<Segment> segment(Segment::open(name, nranks, error));
  if (segment == nullptr) {
    set_last_error(error);
    return ncclSystemError;
  }
  segment->header().pids[rank].store(getpid(), std::memory_order_release);
  if (ncclResult_t result = segment->barrier(rank, collective_timeout_ns(), error); result != ncclSuccess) {
    segment->unlink_name();
    set_last_error("ncclCommInitRank: " + error);
    return result;
  }
  // Every rank has mapped it: the name is no longer needed, and a crash can
  // no longer leave the segment behind.
  if (rank == 0) segment->unlink_name();
  auto state = std::make_shared<CommState>();
  state->segment = std::move(segment);
  state->segment_name = name;
  state->rank = rank;
  state->nranks = nranks;
  state->device = device;
  state->context = context;
  *out = new ncclComm{kCommMagic, std::move(state)};
  return ncclSuccess;
}

}  // namespace

void CommState::fail(ncclResult_t result, const std::string& message) {
  {
    std::lock_guard lock(error_mutex);
    if (last_error.empty()) last_error = message;
  }
  int expected = ncclSuccess;
  async_error.compare_exchange_strong(expected, result);
  set_last_error(message);
}

std::string CommState::error_text() {
  std::lock_guard lock(error_mutex);
  return last_error;
}

CommState* comm_state(ncclComm_t comm) {
  if (comm == nullptr || comm->magic != kCommMagic) return nullptr;
  return comm->state.get();
}

void set_last_error(const std::string& message) {
  std::lock_guard lock(g_last_error_mutex);
  g_last_error = message;
}

std::string last_error() {
  std::lock_guard lock(g_last_error_mutex);
  return g_last_error;
}

ncclResult_t make_unique_id(ncclUniqueId* id) {
  if (id == nullptr) return ncclInvalidArgument;
  std::memset(id, 0, sizeof *id);
  std::memcpy(id->internal, kIdMagic, sizeof kIdMagic);
  if (getrandom(id->internal + 8, 16, 0) != 16) {
    set_last_error("getrandom failed");
    return ncclSystemError;
  }
  const int32_t pid = getpid();
  std::memcpy(id->internal + 24, &pid, sizeof pid);
  return ncclSuccess;
}

ncclResult_t init_rank(ncclComm_t* out, int nranks, const ncclUniqueId& id, int rank, int) {
  if (out == nullptr) return ncclInvalidArgument;
  *out = nullptr;
  if (std::memcmp(id.internal, kIdMagic, sizeof kIdMagic) != 0) {
    set_last_error("the unique id was not made by ncclGetUniqueId");
    return ncclInvalidArgument;
  }
  std::string error;
  const Driver* d = driver(error);
  if (d == nullptr) {
    set_last_error(error);
    return ncclUnhandledCudaError;
  }
  CUcontext context = nullptr;
  int device = 0;
  if (current_or_primary_context(*d, 0, &context, &device) != CUDA_SUCCESS) {
    set_last_error("no usable CUDA device or context");
    return ncclUnhandledCudaError;
  }
  return join("/simnccl-" + hex(id.internal + 8, 16), nranks, rank, context, device, out);
}

ncclResult_t init_all(ncclComm_t* comms, int ndev, const int* devices) {
  if (comms == nullptr || ndev < 1) return ncclInvalidArgument;
  std::string error;
  const Driver* d = driver(error);
  if (d == nullptr) {
    set_last_error(error);
    return ncclUnhandledCudaError;
  }
  std::shared_ptr<Segment> segment(Segment::create_private(ndev, error));
  if (segment == nullptr) {
    set_last_error(error);
    return ncclSystemError;
  }
  unsigned char random[16];
  if (getrandom(random, sizeof random, 0) != sizeof random) return ncclSystemError;
  const std::string name = "/simnccl-" + hex(random, sizeof random);
  if (d->init(0) != CUDA_SUCCESS) return ncclUnhandledCudaError;
  for (int i = 0; i < ndev; ++i) {
    const int device = devices != nullptr ? devices[i] : i;
    CUdevice handle = 0;
    CUcontext context = nullptr;
    if (d->device_get(&handle, device) != CUDA_SUCCESS || d->primary_ctx_retain(&context, handle) != CUDA_SUCCESS) {
      set_last_error("device " + std::to_string(device) + " is not usable");
      for (int j = 0; j < i; ++j) delete comms[j];
      return ncclInvalidArgument;
    }
    segment->header().pids[i].store(getpid());
    auto state = std::make_shared<CommState>();
    state->segment = segment;
    state->segment_name = name;
    state->rank = i;
    state->nranks = ndev;
    state->device = device;
    state->context = context;
    comms[i] = new ncclComm{kCommMagic, std::move(state)};
  }
  return ncclSuccess;
}

ncclResult_t split(ncclComm_t comm, int color, int key, ncclComm_t* out) {
  CommState* parent = comm_state(comm);
  if (parent == nullptr || out == nullptr) return ncclInvalidArgument;
  *out = nullptr;
  if (ncclResult_t failed = ncclResult_t(parent->async_error.load()); failed != ncclSuccess) return failed;
  Segment& segment = *parent->segment;
  const uint64_t split_number = ++parent->splits;
  segment.header().split[parent->rank] = SplitEntry{color, key};
  std::string error;
  if (ncclResult_t result = segment.barrier(parent->rank, collective_timeout_ns(), error); result != ncclSuccess) {
    parent->fail(result, error);
    return result;
  }
  std::vector<std::pair<SplitEntry, int>> members;
  for (int r = 0; r < parent->nranks; ++r)
    if (segment.header().split[r].color == color) members.push_back({segment.header().split[r], r});
  if (ncclResult_t result = segment.barrier(parent->rank, collective_timeout_ns(), error); result != ncclSuccess) {
    parent->fail(result, error);
    return result;
  }
  if (color == NCCL_SPLIT_NOCOLOR) return ncclSuccess;
  std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) {
    return a.first.key != b.first.key ? a.first.key < b.first.key : a.second < b.second;
  });
  int new_rank = 0;
  while (members[new_rank].second != parent->rank) ++new_rank;
  const std::string name =
      parent->segment_name + "-s" + std::to_string(split_number) + "-c" + std::to_string(color);
  return join(name, int(members.size()), new_rank, parent->context, parent->device, out);
}

ncclResult_t destroy(ncclComm_t comm, bool abort) {
  CommState* state = comm_state(comm);
  if (state == nullptr) return ncclInvalidArgument;
  if (abort) state->segment->abort();
  // Stream work still queued holds its own reference: the segment goes away
  // after the last of it ran.
  comm->magic = 0;
  delete comm;
  return ncclSuccess;
}

}  // namespace simnccl
