#include "errors.h"

#include <cuda_runtime_api.h>

namespace simgpu_runtime {
namespace {

struct ErrorDescription {
  cudaError_t code;
  const char* name;
  const char* text;
};

constexpr ErrorDescription kErrors[] = {
#define SIMGPU_RUNTIME_ERROR(code, text) {code, #code, text},
#include "error_table.inc"
#undef SIMGPU_RUNTIME_ERROR
};

const ErrorDescription* describe(int value) {
  for (const ErrorDescription& error : kErrors) {
    if (static_cast<int>(error.code) == value) return &error;
  }
  return nullptr;
}

// Default TLS model on purpose: Python extensions make the dynamic linker load
// this library with dlopen, where initial-exec TLS may not fit.
thread_local cudaError_t last_error = cudaSuccess;

}  // namespace

bool is_known_runtime_error(int value) { return describe(value) != nullptr; }

cudaError_t runtime_error_from(CUresult result) {
  if (result == CUDA_SUCCESS) return cudaSuccess;
  if (is_known_runtime_error(static_cast<int>(result))) return static_cast<cudaError_t>(result);
  return cudaErrorUnknown;
}

cudaError_t finish(cudaError_t error) {
  if (error != cudaSuccess && error != cudaErrorNotReady) last_error = error;
  return error;
}

cudaError_t finish(CUresult result) { return finish(runtime_error_from(result)); }

cudaError_t take_last_error() {
  cudaError_t error = last_error;
  last_error = cudaSuccess;
  return error;
}

cudaError_t peek_last_error() { return last_error; }

}  // namespace simgpu_runtime

using namespace simgpu_runtime;

extern "C" {

const char* cudaGetErrorName(cudaError_t error) {
  const ErrorDescription* description = describe(static_cast<int>(error));
  return description != nullptr ? description->name : "unrecognized error code";
}

const char* cudaGetErrorString(cudaError_t error) {
  const ErrorDescription* description = describe(static_cast<int>(error));
  return description != nullptr ? description->text : "unrecognized error code";
}

cudaError_t cudaGetLastError(void) { return take_last_error(); }

cudaError_t cudaPeekAtLastError(void) { return peek_last_error(); }

}  // extern "C"
