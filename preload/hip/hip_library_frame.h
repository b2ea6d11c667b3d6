// A library call that submits HIP work on the program's streams (an RCCL
// collective: preload/nccl), as preload/cuda/library_frame.h does for CUDA:
// its hook opens this frame around the real call, after recording a start
// event on the stream the call uses; the first kernel launch on that stream
// inside the frame takes the call's correlation id and that start event, so
// the collective is timed from the moment this rank's stream reached it.
//
// Declared without HIP types: the NCCL hooks include only NCCL's and CUDA's.
#pragma once

#include <cstdint>

namespace proflaunch::hip {

// `stream`: the hipStream_t the collective was given.
void open_library_frame(const void* stream, uint64_t correlation_id) noexcept;
// After the real call: a start event no launch took is given back.
void close_library_frame() noexcept;

}  // namespace proflaunch::hip
