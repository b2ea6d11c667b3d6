// Driver functions the shim calls for its own purposes (naming functions,
// finding the device of a context, classifying pointers, GPU timing). They
// are resolved from the loaded libcuda by name, lazily, because libcuda is
// usually dlopen'ed long after the shim starts. Calls through these never
// pass through the shim's hooks.
#pragma once

#include <cuda.h>

namespace proflaunch::cuda {

struct DriverServices {
  CUresult (*ctx_get_current)(CUcontext*);
  CUresult (*ctx_set_current)(CUcontext);
  CUresult (*ctx_get_device)(CUdevice*);
  CUresult (*func_get_name)(const char**, CUfunction);
  CUresult (*func_get_attribute)(int*, CUfunction_attribute, CUfunction);
  CUresult (*kernel_get_attribute)(int*, CUfunction_attribute, CUkernel, CUdevice);
  CUresult (*kernel_get_name)(const char**, CUkernel);
  CUresult (*pointer_get_attribute)(void*, CUpointer_attribute, CUdeviceptr);
  CUresult (*pointer_get_attributes)(unsigned int, CUpointer_attribute*, void**, CUdeviceptr);
  CUresult (*stream_get_id)(CUstream, unsigned long long*);
  CUresult (*device_get_name)(char*, int, CUdevice);
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice);
  CUresult (*device_total_mem)(size_t*, CUdevice);
  CUresult (*device_get_uuid)(CUuuid*, CUdevice);
  CUresult (*event_create)(CUevent*, unsigned int);
  CUresult (*event_record)(CUevent, CUstream);
  CUresult (*event_query)(CUevent);
  CUresult (*event_synchronize)(CUevent);
  CUresult (*event_elapsed_time)(float*, CUevent, CUevent);
  CUresult (*event_destroy)(CUevent);
  CUresult (*stream_create)(CUstream*, unsigned int);
  CUresult (*stream_destroy)(CUstream);
  // Stream capture and graphs (capture_state.h, rows/graph_row.h).
  CUresult (*stream_is_capturing)(CUstream, CUstreamCaptureStatus*);
  CUresult (*stream_get_capture_info_v3)(CUstream, CUstreamCaptureStatus*, cuuint64_t*, CUgraph*,
                                         const CUgraphNode**, const CUgraphEdgeData**, size_t*);
  CUresult (*stream_get_capture_info_v2)(CUstream, CUstreamCaptureStatus*, cuuint64_t*, CUgraph*,
                                         const CUgraphNode**, size_t*);
  CUresult (*thread_exchange_stream_capture_mode)(CUstreamCaptureMode*);
  CUresult (*graph_get_nodes)(CUgraph, CUgraphNode*, size_t*);
  CUresult (*graph_node_get_type)(CUgraphNode, CUgraphNodeType*);
  CUresult (*graph_node_get_dependencies)(CUgraphNode, CUgraphNode*, size_t*);
  CUresult (*graph_kernel_node_get_params)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS_v2*);
  CUresult (*graph_memcpy_node_get_params)(CUgraphNode, CUDA_MEMCPY3D*);
  CUresult (*graph_memset_node_get_params)(CUgraphNode, CUDA_MEMSET_NODE_PARAMS*);
  CUresult (*graph_host_node_get_params)(CUgraphNode, CUDA_HOST_NODE_PARAMS*);
  CUresult (*graph_child_graph_node_get_graph)(CUgraphNode, CUgraph*);
  CUresult (*graph_mem_alloc_node_get_params)(CUgraphNode, CUDA_MEM_ALLOC_NODE_PARAMS*);
  CUresult (*graph_mem_free_node_get_params)(CUgraphNode, CUdeviceptr*);
  CUresult (*kernel_get_function)(CUfunction*, CUkernel);
};

// Null members where the loaded driver lacks a function, and all of them
// while no driver is loaded yet (the lookup is retried until one is).
const DriverServices& driver_services() noexcept;

// Whether the driver has every function GPU timing by events calls (a
// driver without them - an old or a stub one - leaves work untimed).
inline bool has_event_timing(const DriverServices& d) noexcept {
  return d.event_create && d.event_record && d.event_query && d.event_synchronize && d.event_elapsed_time &&
         d.event_destroy && d.stream_create && d.stream_destroy && d.ctx_set_current;
}

}  // namespace proflaunch::cuda
