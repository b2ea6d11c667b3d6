// Every exported entry point runs its body through one of these, so that
// (a) calls before cuInit, or in a forked child of an initialized parent, get
// the documented error, and (b) no C++ exception ever crosses the C ABI.
#pragma once

#include <new>

#include "cuda_api.h"

namespace simgpu {

// CUDA_SUCCESS once cuInit succeeded in this process; otherwise the error every
// API call (except the few documented to work without it) must return.
CUresult driver_ready() noexcept;

template <class Body>
CUresult api_call_without_init(Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  } catch (...) {
    return CUDA_ERROR_UNKNOWN;
  }
}

template <class Body>
CUresult api_call(Body&& body) noexcept {
  if (CUresult ready = driver_ready(); ready != CUDA_SUCCESS) return ready;
  return api_call_without_init(body);
}

}  // namespace simgpu
