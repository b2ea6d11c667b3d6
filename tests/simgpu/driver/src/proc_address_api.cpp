// cuGetProcAddress: hands out the simulator's own entry points, choosing the
// ABI variant by requested CUDA version and per-thread-stream flag from the
// table generated out of cudaTypedefs.h (gen/gen_driver_tables.py).
#include <algorithm>
#include <cstring>

#include "api_guard.h"
#include "proc_table.h"

using namespace simgpu;

namespace {

constexpr cuuint64_t kKnownFlags = CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;

CUresult lookup(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                CUdriverProcAddressQueryResult* status) {
  if (!symbol || !pfn || (flags & ~kKnownFlags)) return CUDA_ERROR_INVALID_VALUE;
  if (cuda_version > CUDA_VERSION) return CUDA_ERROR_INVALID_VALUE;  // documented: newer than the driver
  *pfn = nullptr;
  auto set_status = [&](CUdriverProcAddressQueryResult value) {
    if (status) *status = value;
  };
  const SimgpuProcEntry* begin = simgpu_proc_entries;
  const SimgpuProcEntry* end = simgpu_proc_entries + simgpu_proc_entry_count;
  auto by_name = [](const SimgpuProcEntry& entry, const char* name) { return std::strcmp(entry.name, name) < 0; };
  const SimgpuProcEntry* first = std::lower_bound(begin, end, symbol, by_name);
  const SimgpuProcEntry* best_legacy = nullptr;
  const SimgpuProcEntry* best_per_thread = nullptr;
  bool name_known = false;
  for (const SimgpuProcEntry* entry = first; entry != end && std::strcmp(entry->name, symbol) == 0; ++entry) {
    name_known = true;
    if (entry->version > cuda_version) continue;
    const SimgpuProcEntry*& best = entry->variant == SIMGPU_VARIANT_LEGACY ? best_legacy : best_per_thread;
    if (!best || entry->version > best->version) best = entry;
  }
  // Documented: an unknown symbol or an insufficient version is not an error
  // of the call; pfn is NULL and symbolStatus says why.
  if (!name_known) {
    set_status(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    return CUDA_SUCCESS;
  }
  const bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  const SimgpuProcEntry* chosen = per_thread && best_per_thread ? best_per_thread : best_legacy;
  if (!chosen) {
    set_status(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    return CUDA_SUCCESS;
  }
  *pfn = chosen->address;
  set_status(CU_GET_PROC_ADDRESS_SUCCESS);
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

// Both work before cuInit: runtimes fetch cuInit itself this way.
CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                                     CUdriverProcAddressQueryResult* symbolStatus) {
  return api_call_without_init([&] { return lookup(symbol, pfn, cudaVersion, flags, symbolStatus); });
}

CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) {
  return api_call_without_init([&] { return lookup(symbol, pfn, cudaVersion, flags, nullptr); });
}

// The real runtime asks for private export tables; the simulator has none.
CUresult CUDAAPI cuGetExportTable(const void** ppExportTable, const CUuuid* pExportTableId) {
  (void)pExportTableId;
  if (ppExportTable) *ppExportTable = nullptr;
  return CUDA_ERROR_NOT_SUPPORTED;
}

}  // extern "C"
