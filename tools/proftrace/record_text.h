// Names for the enums in formats/records.h, as the tools print them.
// Unknown values print as a number, never as a wrong name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace proflaunch::tools {

std::string copy_direction_name(uint8_t direction);    // "HtoD", "DtoH", ...
std::string memory_kind_name(uint8_t kind);            // "pageable", "pinned", "device", ...
std::string sync_target_name(uint8_t target);          // "device", "stream", ...
std::string object_kind_name(uint8_t kind);            // "stream", "event", ...
std::string lifecycle_action_name(uint8_t action);     // "create", "destroy"
std::string lost_reason_name(uint32_t reason);
std::string cpu_sampling_state_name(uint8_t state);
std::string cpu_sampling_mechanism_name(uint8_t mechanism);
std::string capture_trigger_name(uint8_t trigger);     // "profiler API", "NVTX range", "step", ...         // "buffer full", ...
std::string wait_object_kind_name(uint8_t kind);      // WaitObjectKind: "mutex", "pipe", ...
std::string api_domain_name(uint8_t domain);           // "driver", "runtime", ...
std::string gpu_activity_kind_name(uint8_t kind);
// GpuTimingSource: "events", "cupti", "rocprofiler"; 0 is "none".
std::string gpu_timing_source_name(uint8_t source);
std::string nvtx_event_type_name(uint8_t type);       // "mark", "push", "pop", "start", "end"
std::string nvtx_name_kind_name(uint8_t kind);        // "registered-string", "category", "os-thread", ...
// An NvtxEvent's payload as text ("" when it has none).
std::string nvtx_payload_text(uint8_t payload_type, uint64_t bits);
// The inline message of an NvtxEvent record (its tail), "" when none.
std::string_view nvtx_inline_message(const uint8_t* record, uint16_t bytes);
// "GPU 0", or "AMD GPU 0" for a HIP device (format::kAmdDeviceBase + ordinal).
std::string device_label(int32_t device);
std::string graph_node_type_name(uint8_t type);          // CUgraphNodeType
std::string graph_exec_action_name(uint8_t action);     // GraphExecAction
std::string capture_mode_name(uint8_t mode);            // CUstreamCaptureMode      // "kernel", "memcpy", "memset"
std::string vendor_name(uint8_t vendor);
std::string allocation_kind_name(uint8_t kind);        // "device", "stream-ordered", "VMM mapping", ...
std::string memory_action_name(uint8_t action);        // "acquire", "release", "set access", "trim"               // "NVIDIA", "AMD"

// The stream as people read it: "legacy default", "per-thread default", or
// the raw handle in hex.
std::string stream_handle_text(uint64_t stream);

std::string hex(uint64_t value);  // "0x1f"

}  // namespace proflaunch::tools
