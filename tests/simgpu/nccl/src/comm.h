// A communicator: this rank's view of the ranks that meet in one segment.
#pragma once

#include <cuda.h>
#include <nccl.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "segment.h"

namespace simnccl {

struct CommState {
  std::shared_ptr<Segment> segment;
  std::string segment_name;  // children of ncclCommSplit are named after it
  int rank = 0;
  int nranks = 0;
  int device = 0;
  CUcontext context = nullptr;
  uint64_t splits = 0;  // ncclCommSplit calls so far (the same on every rank)

  // Set by stream work that failed (a peer died, a timeout): every later call
  // on the communicator returns it (ncclCommGetAsyncError reports it).
  std::atomic<int> async_error{ncclSuccess};
  std::mutex error_mutex;
  std::string last_error;

  void fail(ncclResult_t result, const std::string& message);
  std::string error_text();
};

}  // namespace simnccl

// The opaque handle of nccl.h.
struct ncclComm {
  uint32_t magic;
  std::shared_ptr<simnccl::CommState> state;
};

namespace simnccl {

inline constexpr uint32_t kCommMagic = 0x6e63636c;  // "nccl"

// Null unless `comm` is a live communicator of ours.
CommState* comm_state(ncclComm_t comm);

// Sets the message ncclGetLastError returns for calls without a communicator.
void set_last_error(const std::string& message);
std::string last_error();

// Lifecycle (comm.cpp).
ncclResult_t init_rank(ncclComm_t* out, int nranks, const ncclUniqueId& id, int rank, int device);
ncclResult_t init_all(ncclComm_t* comms, int ndev, const int* devices);
ncclResult_t split(ncclComm_t comm, int color, int key, ncclComm_t* out);
ncclResult_t destroy(ncclComm_t comm, bool abort);
ncclResult_t make_unique_id(ncclUniqueId* id);

}  // namespace simnccl
