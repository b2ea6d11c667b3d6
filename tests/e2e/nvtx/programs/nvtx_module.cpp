// A library with its own NVTX (each module that includes the nvtx3 headers
// has its own NVTX state and attaches to the tool separately), in its own
// domain, as NCCL or cuDNN have: a registered string, a named category, and
// a push/pop range around each call. Loaded by nvtx_ranges (linked) and by
// the Python test (ctypes).
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtSync.h>

namespace {

nvtxDomainHandle_t domain() {
  static nvtxDomainHandle_t handle = nvtxDomainCreateA("nvtx_module");
  return handle;
}

nvtxStringHandle_t step_name() {
  static nvtxStringHandle_t handle = nvtxDomainRegisterStringA(domain(), "module step");
  return handle;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int nvtx_module_work(int calls) {
  nvtxDomainNameCategoryA(domain(), 7, "module category");
  int total = 0;
  for (int i = 0; i < calls; ++i) {
    nvtxEventAttributes_t attributes = {};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.category = 7;
    attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    attributes.message.registered = step_name();
    attributes.payloadType = NVTX_PAYLOAD_TYPE_INT32;
    attributes.payload.iValue = i;
    nvtxDomainRangePushEx(domain(), &attributes);
    total += i;
    nvtxDomainRangePop(domain());
  }
  return total;
}

// A user synchronization object (NVTX's SYNC module): acquired once,
// released, then an acquisition that fails.
extern "C" __attribute__((visibility("default"))) void nvtx_module_sync() {
  nvtxSyncUserAttributes_t attributes = {};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_SYNCUSER_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = "queue lock";
  nvtxSyncUser_t lock = nvtxDomainSyncUserCreate(domain(), &attributes);
  nvtxDomainSyncUserAcquireStart(lock);
  nvtxDomainSyncUserAcquireSuccess(lock);
  nvtxDomainSyncUserReleasing(lock);
  nvtxDomainSyncUserAcquireStart(lock);
  nvtxDomainSyncUserAcquireFailed(lock);
  nvtxDomainSyncUserDestroy(lock);
}
