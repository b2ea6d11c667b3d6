#include "tools/proftrace/collective_text.h"

#include "formats/records.h"

namespace proflaunch::tools {

using format::CollectiveOp;

std::string collective_op_name(uint8_t op) {
  switch (static_cast<CollectiveOp>(op)) {
    case CollectiveOp::kAllReduce: return "AllReduce";
    case CollectiveOp::kBroadcast: return "Broadcast";
    case CollectiveOp::kReduce: return "Reduce";
    case CollectiveOp::kAllGather: return "AllGather";
    case CollectiveOp::kReduceScatter: return "ReduceScatter";
    case CollectiveOp::kAlltoAll: return "AlltoAll";
    case CollectiveOp::kGather: return "Gather";
    case CollectiveOp::kScatter: return "Scatter";
    case CollectiveOp::kSend: return "Send";
    case CollectiveOp::kRecv: return "Recv";
    default: return "op#" + std::to_string(op);
  }
}

std::string nccl_datatype_name(uint8_t datatype) {
  static const char* const kNames[] = {"int8",    "uint8",   "int32",    "uint32",    "int64",    "uint64",
                                       "float16", "float32", "float64", "bfloat16", "float8e4m3", "float8e5m2"};
  return datatype < std::size(kNames) ? kNames[datatype] : "type#" + std::to_string(datatype);
}

std::string nccl_reduction_name(uint8_t reduction) {
  static const char* const kNames[] = {"sum", "prod", "max", "min", "avg"};
  if (reduction == 255) return "";
  return reduction < std::size(kNames) ? kNames[reduction] : "redop#" + std::to_string(reduction);
}

std::string collective_library_name(uint8_t library) {
  switch (static_cast<format::CollectiveLibrary>(library)) {
    case format::CollectiveLibrary::kNccl: return "NCCL";
    case format::CollectiveLibrary::kRccl: return "RCCL";
    case format::CollectiveLibrary::kUnknown: break;
  }
  return "unknown";
}

std::string comm_action_name(uint8_t action) {
  static const char* const kNames[] = {"?", "init", "init-all", "split", "finalize", "destroy", "abort"};
  return action < std::size(kNames) ? kNames[action] : "action#" + std::to_string(action);
}

double bus_bandwidth_factor(uint8_t op, int32_t nranks) {
  const double n = nranks > 0 ? nranks : 1;
  switch (static_cast<CollectiveOp>(op)) {
    case CollectiveOp::kAllReduce: return 2 * (n - 1) / n;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAlltoAll:
    case CollectiveOp::kGather:
    case CollectiveOp::kScatter: return (n - 1) / n;
    default: return 1;  // broadcast, reduce, send, recv
  }
}

}  // namespace proflaunch::tools
