#include "preload/cuda/memory_kinds.h"

#include "preload/cuda/driver_services.h"
#include "preload/cuda/hook.h"
#include "preload/intercept/hook_table.h"

namespace proflaunch::cuda {
namespace {

using format::MemoryKind;

// The device of an explicit context (cuMemcpyPeer): cuCtxGetDevice_v2 (CUDA
// 13) takes the context; older drivers cannot say.
int32_t device_of_context(CUcontext context) {
  using GetDevice = CUresult(CUdevice*, CUcontext);
  static void* slot = nullptr;
  static const intercept::HookEntry entry{"cuCtxGetDevice_v2", nullptr, 0, false, kDriverLibrary, nullptr, &slot};
  auto* get_device = reinterpret_cast<GetDevice*>(intercept::real_function(entry));
  CUdevice device = -1;
  if (get_device == nullptr || get_device(&device, context) != CUDA_SUCCESS) return -1;
  return device;
}

}  // namespace

void classify(MemoryEnd& end) noexcept {
  if (end.declared == DeclaredMemory::kArray) {
    end.kind = MemoryKind::kArray;
    return;
  }
  const DriverServices& driver = driver_services();
  unsigned int type = 0;
  int device = -1;
  unsigned int managed = 0;
  CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                      CU_POINTER_ATTRIBUTE_IS_MANAGED};
  void* values[] = {&type, &device, &managed};
  // cuPointerGetAttributes answers CUDA_SUCCESS with empty values for memory
  // the driver does not know: pageable host memory.
  const bool known = driver.pointer_get_attributes != nullptr &&
                     driver.pointer_get_attributes(3, attributes, values, end.address) == CUDA_SUCCESS;
  if (!known) type = 0;
  if (managed != 0 || type == CU_MEMORYTYPE_UNIFIED) {
    end.kind = MemoryKind::kManaged;
    end.device = device;
  } else if (type == CU_MEMORYTYPE_DEVICE) {
    end.kind = MemoryKind::kDevice;
    end.device = device;
  } else if (type == CU_MEMORYTYPE_HOST) {
    end.kind = MemoryKind::kPinnedHost;
  } else if (type == CU_MEMORYTYPE_ARRAY) {
    end.kind = MemoryKind::kArray;
  } else if (end.declared == DeclaredMemory::kDevice) {
    // Documented as device memory but unknown to the driver: the call will
    // fail; say what the API was asked for.
    end.kind = MemoryKind::kDevice;
  } else {
    end.kind = MemoryKind::kPageableHost;
  }
  if (end.context != nullptr) {
    const int32_t of_context = device_of_context(end.context);
    if (of_context >= 0) end.device = of_context;
  }
}

}  // namespace proflaunch::cuda
