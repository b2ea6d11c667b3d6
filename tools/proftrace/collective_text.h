// Names of the collective records' enumerations (CollectiveOp, NCCL's
// datatypes and reduction ops, CommAction), for dump, convert and stats.
#pragma once

#include <cstdint>
#include <string>

namespace proflaunch::tools {

std::string collective_op_name(uint8_t op);       // "AllReduce", "Send", ...
std::string nccl_datatype_name(uint8_t datatype); // "float32", ...
std::string nccl_reduction_name(uint8_t reduction); // "sum", ..., "" for none
std::string comm_action_name(uint8_t action);     // "init", "split", ...
std::string collective_library_name(uint8_t library);  // "NCCL", "RCCL", "unknown"

// nccl-tests' bus bandwidth factor for `op` on `nranks` ranks.
double bus_bandwidth_factor(uint8_t op, int32_t nranks);

}  // namespace proflaunch::tools
