#include "preload/cuda/driver_services.h"

#include <atomic>

#include "preload/intercept/real_symbols.h"

namespace proflaunch::cuda {
namespace {

DriverServices g_services;
std::atomic<bool> g_complete{false};

template <typename Fn>
void resolve(Fn*& member, const char* name, bool& complete) {
  if (__atomic_load_n(&member, __ATOMIC_ACQUIRE) == nullptr) {
    auto* found = reinterpret_cast<Fn*>(intercept::resolve_real_symbol(name, "libcuda.so"));
    __atomic_store_n(&member, found, __ATOMIC_RELEASE);
  }
  complete = complete && member != nullptr;
}

}  // namespace

const DriverServices& driver_services() noexcept {
  if (g_complete.load(std::memory_order_acquire)) return g_services;
  // Retried while no driver is loaded; once one is, what it lacks (older
  // drivers have no cuFuncGetName, say) stays null for good rather than being
  // looked up again on every call.
  bool found = true;
  resolve(g_services.ctx_get_current, "cuCtxGetCurrent", found);
  if (!found) return g_services;
  bool ignored = true;
  resolve(g_services.ctx_set_current, "cuCtxSetCurrent", ignored);
  resolve(g_services.ctx_get_device, "cuCtxGetDevice", ignored);
  resolve(g_services.func_get_name, "cuFuncGetName", ignored);
  resolve(g_services.func_get_attribute, "cuFuncGetAttribute", ignored);
  resolve(g_services.kernel_get_attribute, "cuKernelGetAttribute", ignored);
  resolve(g_services.pointer_get_attribute, "cuPointerGetAttribute", ignored);
  resolve(g_services.pointer_get_attributes, "cuPointerGetAttributes", ignored);
  resolve(g_services.device_get_name, "cuDeviceGetName", ignored);
  resolve(g_services.device_get_attribute, "cuDeviceGetAttribute", ignored);
  resolve(g_services.device_total_mem, "cuDeviceTotalMem_v2", ignored);
  resolve(g_services.event_create, "cuEventCreate", ignored);
  resolve(g_services.event_record, "cuEventRecord", ignored);
  resolve(g_services.event_query, "cuEventQuery", ignored);
  resolve(g_services.event_synchronize, "cuEventSynchronize", ignored);
  resolve(g_services.event_destroy, "cuEventDestroy_v2", ignored);
  resolve(g_services.stream_create, "cuStreamCreate", ignored);
  resolve(g_services.stream_destroy, "cuStreamDestroy_v2", ignored);
  // cuEventElapsedTime_v2 (12.8+) has the same signature; older drivers only the first.
  resolve(g_services.event_elapsed_time, "cuEventElapsedTime_v2", ignored);
  resolve(g_services.event_elapsed_time, "cuEventElapsedTime", ignored);
  resolve(g_services.kernel_get_name, "cuKernelGetName", ignored);
  resolve(g_services.stream_get_id, "cuStreamGetId", ignored);
  resolve(g_services.device_get_uuid, "cuDeviceGetUuid_v2", ignored);
  resolve(g_services.stream_is_capturing, "cuStreamIsCapturing", ignored);
  resolve(g_services.stream_get_capture_info_v3, "cuStreamGetCaptureInfo_v3", ignored);
  resolve(g_services.stream_get_capture_info_v2, "cuStreamGetCaptureInfo_v2", ignored);
  resolve(g_services.thread_exchange_stream_capture_mode, "cuThreadExchangeStreamCaptureMode", ignored);
  resolve(g_services.graph_get_nodes, "cuGraphGetNodes", ignored);
  resolve(g_services.graph_node_get_type, "cuGraphNodeGetType", ignored);
  resolve(g_services.graph_node_get_dependencies, "cuGraphNodeGetDependencies", ignored);
  resolve(g_services.graph_kernel_node_get_params, "cuGraphKernelNodeGetParams_v2", ignored);
  resolve(g_services.graph_memcpy_node_get_params, "cuGraphMemcpyNodeGetParams", ignored);
  resolve(g_services.graph_memset_node_get_params, "cuGraphMemsetNodeGetParams", ignored);
  resolve(g_services.graph_host_node_get_params, "cuGraphHostNodeGetParams", ignored);
  resolve(g_services.graph_child_graph_node_get_graph, "cuGraphChildGraphNodeGetGraph", ignored);
  resolve(g_services.graph_mem_alloc_node_get_params, "cuGraphMemAllocNodeGetParams", ignored);
  resolve(g_services.graph_mem_free_node_get_params, "cuGraphMemFreeNodeGetParams", ignored);
  resolve(g_services.kernel_get_function, "cuKernelGetFunction", ignored);
  g_complete.store(true, std::memory_order_release);
  return g_services;
}

}  // namespace proflaunch::cuda
