#include "preload/cuda/cupti/pm_sampling_device.h"

#include <time.h>

#include <cstdint>
#include <type_traits>

#include "formats/records.h"
#include "preload/base/clock.h"
#include "preload/cuda/cupti/pm_sampling_records.h"
#include "preload/intercept/dlsym_interposer.h"

namespace proflaunch::cuda {
namespace {

constexpr uint64_t kIntervalNs = 100'000;           // 10 kHz, as Nsight Systems samples by default
constexpr size_t kHardwareBufferBytes = 32u << 20;  // device memory CUPTI reserves per device
constexpr uint32_t kSamplesPerDecode = 4096;        // the counter data image's capacity

PmApi g_api;
PmDecodeCounts g_counts;

// CUPTI's PM sample timestamps are on its default clock (ns since the
// epoch, as cuptiGetTimestamp without a callback): the offset to
// CLOCK_MONOTONIC, the narrowest of a few brackets.
int64_t realtime_to_monotonic() {
  int64_t best_width = INT64_MAX, offset = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    timespec a, r, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    clock_gettime(CLOCK_REALTIME, &r);
    clock_gettime(CLOCK_MONOTONIC, &b);
    const int64_t before = int64_t(a.tv_sec) * 1'000'000'000 + a.tv_nsec;
    const int64_t after = int64_t(b.tv_sec) * 1'000'000'000 + b.tv_nsec;
    const int64_t real = int64_t(r.tv_sec) * 1'000'000'000 + r.tv_nsec;
    if (after - before < best_width) {
      best_width = after - before;
      offset = (before + (after - before) / 2) - real;
    }
  }
  return offset;
}

bool reset_counter_data(PmDevice& device) {
  auto init = pm_params<CUpti_PmSampling_CounterDataImage_Initialize_Params>(
      CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pPmSamplingObject = device.object;
  init.counterDataSize = device.counter_data.size();
  init.pCounterData = device.counter_data.data();
  return pm_api().data_initialize(&init) == CUPTI_SUCCESS;
}

void emit_lost(WriterRecordSink& sink, uint64_t at_ns) {
  format::LostRecord lost{};
  lost.header = format::header_for<format::LostRecord>();
  lost.reason = static_cast<uint32_t>(format::LostReason::kGpuMetricSamplesDropped);
  lost.first_ns = at_ns;
  lost.last_ns = at_ns;
  lost.count = 1;
  sink.append(&lost, sizeof lost);
}

}  // namespace

PmApi& pm_api() noexcept { return g_api; }
PmDecodeCounts& pm_decode_counts() noexcept { return g_counts; }

const char* bind_pm_api(void* handle, PmApi* api) noexcept {
  auto bind = [handle](const char* name, auto& out) {
    out = reinterpret_cast<std::remove_reference_t<decltype(out)>>(intercept::real_dlsym()(handle, name));
    return out != nullptr;
  };
  PmApi& a = *api;
  const bool bound =
      bind("cuptiProfilerInitialize", a.profiler_initialize) && bind("cuptiDeviceGetChipName", a.chip_name) &&
      bind("cuptiPmSamplingGetCounterAvailability", a.availability) &&
      bind("cuptiProfilerHostInitialize", a.host_initialize) &&
      bind("cuptiProfilerHostDeinitialize", a.host_deinitialize) &&
      bind("cuptiProfilerHostConfigAddMetrics", a.add_metrics) &&
      bind("cuptiProfilerHostGetConfigImageSize", a.config_size) &&
      bind("cuptiProfilerHostGetConfigImage", a.config_image) &&
      bind("cuptiProfilerHostEvaluateToGpuValues", a.evaluate) && bind("cuptiPmSamplingEnable", a.enable) &&
      bind("cuptiPmSamplingDisable", a.disable) && bind("cuptiPmSamplingSetConfig", a.set_config) &&
      bind("cuptiPmSamplingStart", a.start) && bind("cuptiPmSamplingStop", a.stop) &&
      bind("cuptiPmSamplingGetCounterDataSize", a.data_size) &&
      bind("cuptiPmSamplingCounterDataImageInitialize", a.data_initialize) &&
      bind("cuptiPmSamplingDecodeData", a.decode) && bind("cuptiPmSamplingGetCounterDataInfo", a.data_info) &&
      bind("cuptiPmSamplingCounterDataGetSampleInfo", a.sample_info);
  return bound ? nullptr : "libcupti.so.13 has no PM sampling API (CUPTI older than 12.6?)";
}

// Target side: enable, configure, start. Null on success, else why.
const char* start_pm_device(PmDevice& device, const std::vector<uint8_t>& config, CUptiResult* failure) noexcept {
  auto enable = pm_params<CUpti_PmSampling_Enable_Params>(CUpti_PmSampling_Enable_Params_STRUCT_SIZE);
  enable.deviceIndex = size_t(device.ordinal);
  if ((*failure = pm_api().enable(&enable)) != CUPTI_SUCCESS) return "cuptiPmSamplingEnable failed";
  device.object = enable.pPmSamplingObject;
  auto set = pm_params<CUpti_PmSampling_SetConfig_Params>(CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE);
  set.pPmSamplingObject = device.object;
  set.configSize = config.size();
  set.pConfig = config.data();
  set.hardwareBufferSize = kHardwareBufferBytes;
  set.samplingInterval = kIntervalNs;
  set.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  set.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  if ((*failure = pm_api().set_config(&set)) != CUPTI_SUCCESS) return "cuptiPmSamplingSetConfig failed";
  auto size = pm_params<CUpti_PmSampling_GetCounterDataSize_Params>(CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pPmSamplingObject = device.object;
  size.pMetricNames = device.names.data();
  size.numMetrics = device.names.size();
  size.maxSamples = kSamplesPerDecode;
  if ((*failure = pm_api().data_size(&size)) != CUPTI_SUCCESS) return "cuptiPmSamplingGetCounterDataSize failed";
  device.counter_data.assign(size.counterDataSize, 0);
  if (!reset_counter_data(device)) return "cuptiPmSamplingCounterDataImageInitialize failed";
  auto start = pm_params<CUpti_PmSampling_Start_Params>(CUpti_PmSampling_Start_Params_STRUCT_SIZE);
  start.pPmSamplingObject = device.object;
  if ((*failure = pm_api().start(&start)) != CUPTI_SUCCESS) return "cuptiPmSamplingStart failed";
  device.started = true;
  return nullptr;
}

void release_pm_device(PmDevice& device) noexcept {
  if (device.object != nullptr) {
    auto disable = pm_params<CUpti_PmSampling_Disable_Params>(CUpti_PmSampling_Disable_Params_STRUCT_SIZE);
    disable.pPmSamplingObject = device.object;
    pm_api().disable(&disable);
    device.object = nullptr;
  }
  if (device.host != nullptr) {
    auto host = pm_params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    host.pHostObject = device.host;
    pm_api().host_deinitialize(&host);
    device.host = nullptr;
  }
}

// Empties `device`'s hardware buffer into records.
void decode_pm_device(PmDevice& device, WriterRecordSink& sink) noexcept {
  const int64_t offset = realtime_to_monotonic();
  std::vector<PmDecodedSample> samples;
  for (int pass = 0; pass < 64; ++pass) {  // bounded: the buffer refills while we read
    auto request = pm_params<CUpti_PmSampling_DecodeData_Params>(CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE);
    request.pPmSamplingObject = device.object;
    request.pCounterDataImage = device.counter_data.data();
    request.counterDataImageSize = device.counter_data.size();
    const CUptiResult decoded = pm_api().decode(&request);
    if (decoded != CUPTI_SUCCESS && decoded != CUPTI_ERROR_OUT_OF_MEMORY) return;
    // The hardware buffer filled before this decode: samples were not taken
    // (KEEP_OLDEST), counted as one loss at this time.
    if (request.overflow != 0 || decoded == CUPTI_ERROR_OUT_OF_MEMORY) emit_lost(sink, now_ns());
    auto info = pm_params<CUpti_PmSampling_GetCounterDataInfo_Params>(CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE);
    info.pCounterDataImage = device.counter_data.data();
    info.counterDataImageSize = device.counter_data.size();
    if (pm_api().data_info(&info) != CUPTI_SUCCESS) return;
    samples.clear();
    samples.reserve(info.numCompletedSamples);
    for (size_t i = 0; i < info.numCompletedSamples; ++i) {
      auto sample = pm_params<CUpti_PmSampling_CounterData_GetSampleInfo_Params>(CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE);
      sample.pPmSamplingObject = device.object;
      sample.pCounterDataImage = device.counter_data.data();
      sample.counterDataImageSize = device.counter_data.size();
      sample.sampleIndex = i;
      if (pm_api().sample_info(&sample) != CUPTI_SUCCESS) continue;
      PmDecodedSample out;
      out.start_ns = sample.startTimestamp;
      out.end_ns = sample.endTimestamp;
      out.values.assign(device.names.size(), 0.0);
      auto evaluate = pm_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
      evaluate.pHostObject = device.host;
      evaluate.pCounterDataImage = device.counter_data.data();
      evaluate.counterDataImageSize = device.counter_data.size();
      evaluate.rangeIndex = i;
      evaluate.ppMetricNames = device.names.data();
      evaluate.numMetrics = device.names.size();
      evaluate.pMetricValues = out.values.data();
      if (pm_api().evaluate(&evaluate) != CUPTI_SUCCESS) continue;
      samples.push_back(std::move(out));
    }
    pm_decode_counts().samples += samples.size();
    pm_decode_counts().records += write_pm_samples(device.metric_ids, samples, offset, device.last_written_ns, &device.last_written_ns, sink);
    if (!reset_counter_data(device)) return;
    if (request.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) return;
  }
}

void stop_pm_device(PmDevice& device, WriterRecordSink& sink) noexcept {
  if (device.started) {
    auto stop = pm_params<CUpti_PmSampling_Stop_Params>(CUpti_PmSampling_Stop_Params_STRUCT_SIZE);
    stop.pPmSamplingObject = device.object;
    pm_api().stop(&stop);
    device.started = false;
    decode_pm_device(device, sink);
  }
  release_pm_device(device);
}

}  // namespace proflaunch::cuda
