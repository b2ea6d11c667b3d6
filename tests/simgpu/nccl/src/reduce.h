// Element-wise reductions of the datatypes NCCL defines, on host memory
// (device memory is host memory in the simulator). Half and bfloat16 are
// reduced in float and rounded back, as NCCL's kernels do per step.
#pragma once

#include <nccl.h>

#include <cstddef>

namespace simnccl {

// Bytes per element; 0 for a datatype NCCL does not define.
size_t datatype_bytes(ncclDataType_t datatype);

// Whether `op` can reduce `datatype` here (the fp8 types only move data).
bool can_reduce(ncclDataType_t datatype, ncclRedOp_t op);

// accumulator[i] = op(accumulator[i], input[i]) for `count` elements.
void reduce_into(void* accumulator, const void* input, size_t count, ncclDataType_t datatype, ncclRedOp_t op);

// For ncclAvg: accumulator holds the sum of `nranks` inputs; divides it.
void finish_average(void* accumulator, size_t count, ncclDataType_t datatype, int nranks);

}  // namespace simnccl
