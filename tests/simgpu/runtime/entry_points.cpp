// cudaGetDriverEntryPoint(ByVersion): the runtime's window onto
// cuGetProcAddress_v2, which torch and triton use to reach driver functions
// without linking libcuda. Passed straight through, so callers get exactly
// the ABI variant the driver hands out.
#include <cuda_runtime_api.h>

#include "context.h"
#include "errors.h"
#include "per_thread_declarations.h"
#include "tools_trace.h"

using namespace simgpu_runtime;

static_assert(static_cast<int>(cudaEnablePerThreadDefaultStream) ==
              static_cast<int>(CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM));
static_assert(static_cast<int>(cudaDriverEntryPointVersionNotSufficent) ==
              static_cast<int>(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT));

namespace {

cudaError_t driver_entry_point(DefaultStream mode, const char* symbol, void** function,
                               int cuda_version, unsigned long long flags,
                               cudaDriverEntryPointQueryResult* status) {
  if (symbol == nullptr || function == nullptr) return finish(cudaErrorInvalidValue);
  *function = nullptr;
  // cudaEnableDefault means "as this call site was compiled": the _ptsz entry
  // point exists only in code built with --default-stream per-thread.
  if (flags == cudaEnableDefault) {
    flags = mode == DefaultStream::per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                                              : CU_GET_PROC_ADDRESS_LEGACY_STREAM;
  }
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter(mode, &api)) return finish(error);
  CUdriverProcAddressQueryResult query_status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CUresult result = api->cuGetProcAddress_v2(symbol, function, cuda_version, flags, &query_status);
  if (status != nullptr) *status = static_cast<cudaDriverEntryPointQueryResult>(query_status);
  return finish(result);
}

}  // namespace

extern "C" {

cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags,
                                    enum cudaDriverEntryPointQueryResult* driverStatus) {
  return traced("cudaGetDriverEntryPoint", [&] { return driver_entry_point(DefaultStream::legacy, symbol, funcPtr, CUDART_VERSION, flags,
                            driverStatus); });
}
cudaError_t cudaGetDriverEntryPoint_ptsz(const char* symbol, void** funcPtr,
                                         unsigned long long flags,
                                         enum cudaDriverEntryPointQueryResult* driverStatus) {
  return traced("cudaGetDriverEntryPoint_ptsz", [&] { return driver_entry_point(DefaultStream::per_thread, symbol, funcPtr, CUDART_VERSION, flags,
                            driverStatus); });
}

cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr,
                                             unsigned int cudaVersion, unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult* driverStatus) {
  return traced("cudaGetDriverEntryPointByVersion", [&] { return driver_entry_point(DefaultStream::legacy, symbol, funcPtr, static_cast<int>(cudaVersion),
                            flags, driverStatus); });
}
cudaError_t cudaGetDriverEntryPointByVersion_ptsz(
    const char* symbol, void** funcPtr, unsigned int cudaVersion, unsigned long long flags,
    enum cudaDriverEntryPointQueryResult* driverStatus) {
  return traced("cudaGetDriverEntryPointByVersion_ptsz", [&] { return driver_entry_point(DefaultStream::per_thread, symbol, funcPtr,
                            static_cast<int>(cudaVersion), flags, driverStatus); });
}

// The real runtime hands out private interface tables (the same mechanism as
// the driver's cuGetExportTable) to NVIDIA's own libraries. Their layouts are
// undocumented; this runtime has none.
cudaError_t cudaGetExportTable(const void** ppExportTable, const cudaUUID_t* /*pExportTableId*/) {
  if (ppExportTable != nullptr) *ppExportTable = nullptr;
  return finish(cudaErrorNotSupported);
}

cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w,
                                            enum cudaChannelFormatKind f) {
  return cudaChannelFormatDesc{x, y, z, w, f};
}

}  // extern "C"
