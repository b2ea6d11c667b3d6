// Events: a recorded event is the completion of a zero-duration marker
// operation on its stream, so its timestamp is the moment the stream reached it.
#pragma once

#include <mutex>

#include "cuda_api.h"
#include "stream.h"

struct CUevent_st {
  CUctx_st* context = nullptr;
  unsigned flags = 0;
  std::mutex mutex;
  simgpu::CompletionRef recorded;  // newest record; nullptr until the first cuEventRecord
};
