// A library call that submits GPU work on the program's streams through the
// driver (an NCCL collective: preload/nccl). Its hook opens this frame around
// the real call, after recording a GPU start event on each stream the call
// will use. The first kernel launch on such a stream inside the frame takes
// the entry's correlation id (so the launch, its GpuActivity and the library
// call's record share it) and the entry's start event (so the GpuActivity
// starts when the stream reached the library call, not when the library got
// round to its kernel: a collective whose kernel waits for its peers, or
// that the library queues behind its own host functions, is timed from the
// moment this rank arrived).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <cstring>

#include "preload/cuda/capture_state.h"
#include "preload/cuda/gpu_timing.h"

namespace proflaunch::cuda {

inline constexpr uint32_t kMaxLibraryFrameStreams = 8;

// Trivially constructible (it lives in __thread storage): the start token
// is kept as bytes.
struct LibraryFrameEntry {
  CUstream stream;          // as the launch hook sees it (effective_stream)
  uint64_t correlation_id;
  alignas(TimingToken) unsigned char start_bytes[sizeof(TimingToken)];
  bool taken;

  TimingToken start() const noexcept {
    TimingToken token;
    std::memcpy(static_cast<void*>(&token), start_bytes, sizeof token);
    return token;
  }
  static LibraryFrameEntry make(CUstream stream, uint64_t correlation_id, const TimingToken& start) noexcept {
    LibraryFrameEntry entry{stream, correlation_id, {}, false};
    std::memcpy(entry.start_bytes, static_cast<const void*>(&start), sizeof start);
    return entry;
  }
};

// The start event a library call takes on `stream` for its later launch:
// none when the stream captures (the launch becomes a graph node and does
// not run; capture_state.h) or GPU timing is off.
inline TimingToken library_frame_start(CUstream stream, CUcontext context) noexcept {
  if (!gpu_timing_enabled() || stream_may_be_capturing(stream)) return TimingToken{};
  return gpu_timing_for_host_work().before(stream, context, Submission::kLibraryFrame, false);
}

struct LibraryFrame {
  uint32_t count;  // 0: no library call in progress on this thread (zero-initialized TLS)
  LibraryFrameEntry entries[kMaxLibraryFrameStreams];
};

extern __thread __attribute__((tls_model("initial-exec"))) LibraryFrame tls_library_frame;

// For the launch hook: the untaken entry for `stream` (now taken), or null.
inline LibraryFrameEntry* take_library_frame_entry(CUstream stream) noexcept {
  LibraryFrame& frame = tls_library_frame;
  for (uint32_t i = 0; i < frame.count; ++i) {
    LibraryFrameEntry& entry = frame.entries[i];
    if (!entry.taken && entry.stream == stream) {
      entry.taken = true;
      return &entry;
    }
  }
  return nullptr;
}

}  // namespace proflaunch::cuda
