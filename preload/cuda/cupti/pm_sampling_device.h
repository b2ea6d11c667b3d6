// One device's CUPTI PM sampling session, the CUPTI side of pm_sampling.cpp:
// the entry points (resolved on libcupti's handle, never the shim's own
// exports), enable / configure / start, decode the hardware buffer into
// GpuMetricSample records, stop and disable. Called on the writer thread
// only.
#pragma once

#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "preload/writer/writer_tasks.h"

namespace proflaunch::cuda {

// The entry points, resolved on libcupti's handle.
struct PmApi {
  decltype(&::cuptiProfilerInitialize) profiler_initialize = nullptr;
  decltype(&::cuptiDeviceGetChipName) chip_name = nullptr;
  decltype(&::cuptiPmSamplingGetCounterAvailability) availability = nullptr;
  decltype(&::cuptiProfilerHostInitialize) host_initialize = nullptr;
  decltype(&::cuptiProfilerHostDeinitialize) host_deinitialize = nullptr;
  decltype(&::cuptiProfilerHostConfigAddMetrics) add_metrics = nullptr;
  decltype(&::cuptiProfilerHostGetConfigImageSize) config_size = nullptr;
  decltype(&::cuptiProfilerHostGetConfigImage) config_image = nullptr;
  decltype(&::cuptiProfilerHostEvaluateToGpuValues) evaluate = nullptr;
  decltype(&::cuptiPmSamplingEnable) enable = nullptr;
  decltype(&::cuptiPmSamplingDisable) disable = nullptr;
  decltype(&::cuptiPmSamplingSetConfig) set_config = nullptr;
  decltype(&::cuptiPmSamplingStart) start = nullptr;
  decltype(&::cuptiPmSamplingStop) stop = nullptr;
  decltype(&::cuptiPmSamplingGetCounterDataSize) data_size = nullptr;
  decltype(&::cuptiPmSamplingCounterDataImageInitialize) data_initialize = nullptr;
  decltype(&::cuptiPmSamplingDecodeData) decode = nullptr;
  decltype(&::cuptiPmSamplingGetCounterDataInfo) data_info = nullptr;
  decltype(&::cuptiPmSamplingCounterDataGetSampleInfo) sample_info = nullptr;
};

// One device's PM sampling session (owned by the writer thread).
struct PmDevice {
  int ordinal = -1;
  CUpti_PmSampling_Object* object = nullptr;
  CUpti_Profiler_Host_Object* host = nullptr;
  std::vector<uint8_t> counter_data;
  std::vector<const char*> names;  // CUPTI names, alive as long as the chosen metrics
  std::vector<uint32_t> metric_ids;
  uint64_t last_written_ns = 0;
  bool started = false;
};

// A parameter structure as CUPTI wants it: zeroed, its size set.
template <typename T>
T pm_params(size_t struct_size) {
  T p{};
  p.structSize = struct_size;
  return p;
}

// The entry points in use (bound by bind_pm_api).
PmApi& pm_api() noexcept;
// Binds every entry point on `handle`: null, or why not.
const char* bind_pm_api(void* handle, PmApi* api) noexcept;

// Enables PM sampling on device.ordinal, configures it (10 kHz, GPU time
// interval, 32 MiB hardware buffer, KEEP_OLDEST) with `config` and the
// device's metric names, makes its counter data image and starts it. Null,
// or what failed (`*failure`: CUPTI's result).
const char* start_pm_device(PmDevice& device, const std::vector<uint8_t>& config, CUptiResult* failure) noexcept;
// Empties the device's hardware buffer into GpuMetricSample records (a full
// buffer before it: one Lost record of reason kGpuMetricSamplesDropped).
void decode_pm_device(PmDevice& device, WriterRecordSink& sink) noexcept;
// Stops, decodes the rest, disables.
void stop_pm_device(PmDevice& device, WriterRecordSink& sink) noexcept;
// Disables and frees what was made (no decode).
void release_pm_device(PmDevice& device) noexcept;

// What decoding wrote so far (the verbose line at exit).
struct PmDecodeCounts {
  uint64_t samples = 0;
  uint64_t records = 0;
};
PmDecodeCounts& pm_decode_counts() noexcept;

}  // namespace proflaunch::cuda
