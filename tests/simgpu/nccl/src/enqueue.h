// Turning API calls into stream work: groups (ncclGroupStart/End, per
// thread, nestable) collect operations; the outermost ncclGroupEnd, or a
// call outside any group, puts each (communicator, stream) share on its
// stream as a host function that meets the peers and moves the data, then
// the collective's kernel. So the kernel completes only after every rank
// reached the collective, and work queued behind it on the stream waits too.
#pragma once

#include "operation.h"

namespace simnccl {

ncclResult_t submit(const Operation& op);
ncclResult_t group_start();
ncclResult_t group_end();

// The name of the kernel the real NCCL 2.28 would launch for `ops`.
std::string kernel_name(const std::vector<Operation>& ops);

}  // namespace simnccl
