// Every exported entry point runs its body through one of these, so that
// (a) calls before cuInit, or in a forked child of an initialized parent, get
// the documented error, and (b) no C++ exception ever crosses the C ABI.
#pragma once

#include <new>

#include "cuda_api.h"
#include "tools.h"

namespace simgpu {

// CUDA_SUCCESS once cuInit succeeded in this process; otherwise the error every
// API call (except the few documented to work without it) must return.
CUresult driver_ready() noexcept;

// A kernel hit an illegal address: from now on every call returns
// CUDA_ERROR_ILLEGAL_ADDRESS (a sticky error; the process must restart).
void mark_device_fault() noexcept;

template <class Body>
CUresult api_body(Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  } catch (...) {
    return CUDA_ERROR_UNKNOWN;
  }
}

// (c) a tools library hears of every call (tools.h): `function` is the entry
// point the body runs for, as the compiler names the caller.
template <class Body>
CUresult api_call_without_init(Body&& body, const char* function = __builtin_FUNCTION()) noexcept {
  tools::ApiScope scope(SIMGPU_TOOLS_DRIVER, function);
  const CUresult result = api_body(body);
  scope.exit(result);
  return result;
}

template <class Body>
CUresult api_call(Body&& body, const char* function = __builtin_FUNCTION()) noexcept {
  tools::ApiScope scope(SIMGPU_TOOLS_DRIVER, function);
  const CUresult ready = driver_ready();
  const CUresult result = ready != CUDA_SUCCESS ? ready : api_body(body);
  scope.exit(result);
  return result;
}

}  // namespace simgpu
