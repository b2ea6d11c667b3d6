// cuGetErrorName / cuGetErrorString for every CUresult in cuda.h (the table is
// generated from cuda.h's enum by gen/gen_driver_tables.py).
#include "cuda_api.h"

namespace {

struct ErrorRow {
  int value;
  const char* name;
  const char* description;  // first sentence of cuda.h's comment
};

constexpr ErrorRow kErrors[] = {
#include "error_table.inc"
};

// The short messages the real driver prints for the errors programs meet most;
// the rest use cuda.h's description.
struct ShortMessage {
  CUresult value;
  const char* text;
};
constexpr ShortMessage kShortMessages[] = {
    {CUDA_SUCCESS, "no error"},
    {CUDA_ERROR_INVALID_VALUE, "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "driver shutting down"},
    {CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "invalid device context"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed"},
    {CUDA_ERROR_JIT_COMPILER_NOT_FOUND, "PTX JIT compiler library not found"},
    {CUDA_ERROR_FILE_NOT_FOUND, "file not found"},
    {CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch"},
    {CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "peer access is already enabled"},
    {CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "peer access has not been enabled"},
    {CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed"},
    {CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "part or all of the requested memory range is already mapped"},
    {CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "pointer does not correspond to a registered memory region"},
    {CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "too many blocks in cooperative launch"},
    {CUDA_ERROR_NOT_SUPPORTED, "operation not supported"},
    {CUDA_ERROR_UNKNOWN, "unknown error"},
};

const ErrorRow* find_error(CUresult error) {
  for (const ErrorRow& row : kErrors) {
    if (row.value == int(error)) return &row;
  }
  return nullptr;
}

}  // namespace

extern "C" {

// Documented to work without cuInit.
CUresult CUDAAPI cuGetErrorName(CUresult error, const char** pStr) {
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorRow* row = find_error(error);
  *pStr = row ? row->name : nullptr;
  return row ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char** pStr) {
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorRow* row = find_error(error);
  if (!row) {
    *pStr = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
  *pStr = row->description;
  for (const ShortMessage& message : kShortMessages) {
    if (message.value == error) *pStr = message.text;
  }
  return CUDA_SUCCESS;
}

}  // extern "C"
