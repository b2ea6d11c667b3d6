// One NCCL operation as the API call described it, and the work a stream
// runs for a group of them.
#pragma once

#include <cuda.h>
#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

#include "comm.h"

namespace simnccl {

enum class OpKind { kAllReduce, kBroadcast, kReduce, kAllGather, kReduceScatter, kAlltoAll, kGather, kScatter, kSend, kRecv };

struct Operation {
  OpKind kind;
  const void* send;
  void* recv;
  size_t count;  // per rank, as the API counts it (sendcount, recvcount, count)
  ncclDataType_t datatype;
  ncclRedOp_t op;
  int root;  // root, or peer for send/recv
  std::shared_ptr<CommState> comm;
  CUstream stream;
};

bool is_point_to_point(OpKind kind);

// Bytes the bandwidth model charges (nccl-tests' bus bytes).
double bus_bytes(const Operation& op);

// Runs a stream's share of a group on the stream's worker, in the order the
// ranks must agree on: the collectives in call order, then every send and
// receive together. Fills `all_arrived_ns` with the moment the first
// rendezvous completed (-1 if none). On failure `error` says why.
ncclResult_t execute(const std::vector<Operation>& ops, int64_t* all_arrived_ns, std::string& error);

// Checks an operation's arguments as the API does (before anything runs).
ncclResult_t validate(const Operation& op, std::string& error);

}  // namespace simnccl
