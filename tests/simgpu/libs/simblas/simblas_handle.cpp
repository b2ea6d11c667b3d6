// Handle lifetime: driver bring-up, module loading, workspace.
#include <mutex>

#include "simblas_internal.h"

namespace simblas {
namespace {

// The library image is loaded once per process with cuLibraryLoadData
// (context-independent, as CUDA 12+ libraries do); each handle then asks
// for the functions in its own context.
CUlibrary g_library = nullptr;
CUkernel g_gemm_kernels[kGemmFamilyCount][kOperandLayoutCount] = {};
CUkernel g_split_k_reduce_kernel = nullptr;
CUresult g_library_status = CUDA_ERROR_NOT_INITIALIZED;
std::once_flag g_library_once;

void load_library(const DriverEntryPoints* d) {
  CUresult rc =
      d->library_load_data(&g_library, simblas_fatbin, nullptr, nullptr, 0, nullptr, nullptr, 0);
  for (int family = 0; family < kGemmFamilyCount; ++family)
    for (int layout = 0; layout < kOperandLayoutCount; ++layout)
      if (rc == CUDA_SUCCESS)
        rc = d->library_get_kernel(&g_gemm_kernels[family][layout], g_library,
                                   gemm_kernel_symbol(GemmFamily(family), OperandLayout(layout)));
  if (rc == CUDA_SUCCESS)
    rc = d->library_get_kernel(&g_split_k_reduce_kernel, g_library, kSplitKReduceSymbol);
  g_library_status = rc;
}

// Without a current context, do what the static runtime inside cuBLAS does:
// use the primary context of device 0.
CUresult make_context_current(const DriverEntryPoints* d, CUcontext* context) {
  CUresult rc = d->ctx_get_current(context);
  if (rc != CUDA_SUCCESS || *context != nullptr) return rc;
  CUdevice device = 0;
  if ((rc = d->device_get(&device, 0)) != CUDA_SUCCESS) return rc;
  if ((rc = d->primary_ctx_retain(context, device)) != CUDA_SUCCESS) return rc;
  return d->ctx_set_current(*context);
}

}  // namespace
}  // namespace simblas

using namespace simblas;

extern "C" simblasStatus_t simblasCreate(simblasHandle_t* handle) {
  if (handle == nullptr) return SIMBLAS_STATUS_INVALID_VALUE;
  *handle = nullptr;
  const DriverEntryPoints* d = driver_entry_points(nullptr);
  if (d == nullptr || d->init(0) != CUDA_SUCCESS) return SIMBLAS_STATUS_NOT_INITIALIZED;

  simblasContext h{};
  h.driver = d;
  if (make_context_current(d, &h.context) != CUDA_SUCCESS ||
      d->ctx_get_device(&h.device, nullptr) != CUDA_SUCCESS ||
      d->device_get_attribute(&h.compute_capability_major,
                              CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                              h.device) != CUDA_SUCCESS)
    return SIMBLAS_STATUS_NOT_INITIALIZED;

  std::call_once(g_library_once, load_library, d);
  if (g_library_status != CUDA_SUCCESS) return SIMBLAS_STATUS_INTERNAL_ERROR;
  CUresult rc = d->kernel_get_function(&h.split_k_reduce, g_split_k_reduce_kernel);
  for (int family = 0; family < kGemmFamilyCount; ++family)
    for (int layout = 0; layout < kOperandLayoutCount; ++layout)
      if (rc == CUDA_SUCCESS)
        rc = d->kernel_get_function(&h.gemm[family][layout], g_gemm_kernels[family][layout]);
  if (rc != CUDA_SUCCESS) return SIMBLAS_STATUS_INTERNAL_ERROR;

  if (d->mem_alloc(&h.workspace, kWorkspaceBytes) != CUDA_SUCCESS)
    return SIMBLAS_STATUS_ALLOC_FAILED;
  *handle = new simblasContext(h);
  return SIMBLAS_STATUS_SUCCESS;
}

extern "C" simblasStatus_t simblasDestroy(simblasHandle_t handle) {
  if (handle == nullptr) return SIMBLAS_STATUS_NOT_INITIALIZED;
  // cuMemFree synchronizes with work that may still use the workspace.
  const CUresult rc = handle->driver->mem_free(handle->workspace);
  delete handle;
  return rc == CUDA_SUCCESS ? SIMBLAS_STATUS_SUCCESS : SIMBLAS_STATUS_INTERNAL_ERROR;
}

extern "C" simblasStatus_t simblasSetStream(simblasHandle_t handle, CUstream stream) {
  if (handle == nullptr) return SIMBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return SIMBLAS_STATUS_SUCCESS;
}

extern "C" simblasStatus_t simblasGetStream(simblasHandle_t handle, CUstream* stream) {
  if (handle == nullptr) return SIMBLAS_STATUS_NOT_INITIALIZED;
  if (stream == nullptr) return SIMBLAS_STATUS_INVALID_VALUE;
  *stream = handle->stream;
  return SIMBLAS_STATUS_SUCCESS;
}

extern "C" const char* simblasGetStatusString(simblasStatus_t status) {
  switch (status) {
    case SIMBLAS_STATUS_SUCCESS:
      return "SIMBLAS_STATUS_SUCCESS";
    case SIMBLAS_STATUS_NOT_INITIALIZED:
      return "SIMBLAS_STATUS_NOT_INITIALIZED";
    case SIMBLAS_STATUS_ALLOC_FAILED:
      return "SIMBLAS_STATUS_ALLOC_FAILED";
    case SIMBLAS_STATUS_INVALID_VALUE:
      return "SIMBLAS_STATUS_INVALID_VALUE";
    case SIMBLAS_STATUS_ARCH_MISMATCH:
      return "SIMBLAS_STATUS_ARCH_MISMATCH";
    case SIMBLAS_STATUS_EXECUTION_FAILED:
      return "SIMBLAS_STATUS_EXECUTION_FAILED";
    case SIMBLAS_STATUS_INTERNAL_ERROR:
      return "SIMBLAS_STATUS_INTERNAL_ERROR";
    case SIMBLAS_STATUS_NOT_SUPPORTED:
      return "SIMBLAS_STATUS_NOT_SUPPORTED";
  }
  return "unknown simblas status";
}
