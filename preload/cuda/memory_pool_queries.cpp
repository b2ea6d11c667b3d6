#include "preload/cuda/memory_pool_queries.h"

#include "formats/records.h"
#include "preload/cuda/driver_services.h"
#include "preload/intercept/real_symbols.h"

namespace proflaunch::cuda {
namespace {

using GetPool = CUresult(CUmemoryPool*, CUdevice);
using GetPoolAttribute = CUresult(CUmemoryPool, CUmemPool_attribute, void*);

// Resolved on first use and kept once found (libcuda is loaded by then: a
// pool call came through it). Null while the driver lacks them.
template <typename Function>
Function* driver_function(Function*& slot, const char* name) noexcept {
  Function* found = __atomic_load_n(&slot, __ATOMIC_ACQUIRE);
  if (found == nullptr) {
    found = reinterpret_cast<Function*>(intercept::resolve_real_symbol(name, "libcuda.so"));
    __atomic_store_n(&slot, found, __ATOMIC_RELEASE);
  }
  return found;
}

GetPool* g_device_get_mem_pool;
GetPoolAttribute* g_pool_get_attribute;

}  // namespace

CUmemoryPool pool_of_address(CUdeviceptr address) noexcept {
  const DriverServices& driver = driver_services();
  CUmemoryPool pool = nullptr;
  if (address == 0 || driver.pointer_get_attribute == nullptr ||
      driver.pointer_get_attribute(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, address) != CUDA_SUCCESS)
    return nullptr;
  return pool;
}

CUmemoryPool current_pool_of_device(int device) noexcept {
  auto* get_pool = driver_function(g_device_get_mem_pool, "cuDeviceGetMemPool");
  CUmemoryPool pool = nullptr;
  if (device < 0 || get_pool == nullptr || get_pool(&pool, device) != CUDA_SUCCESS) return nullptr;
  return pool;
}

uint64_t pool_reserved_bytes(CUmemoryPool pool) noexcept {
  auto* get_attribute = driver_function(g_pool_get_attribute, "cuMemPoolGetAttribute");
  cuuint64_t reserved = 0;
  if (pool == nullptr || get_attribute == nullptr ||
      get_attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved) != CUDA_SUCCESS)
    return format::kPoolReservedUnknown;
  return reserved;
}

}  // namespace proflaunch::cuda
