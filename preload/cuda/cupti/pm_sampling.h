// The GPU's own counters through CUPTI PM sampling (--gpu-metrics-counters,
// NVIDIA): per device the program used, CUPTI samples the chosen metrics at
// 10 kHz into a hardware buffer; a writer task decodes it off every hook
// path and writes GpuMetricDef (source kCuptiPmSampling, device = the
// section's DeviceInfo) and GpuMetricSample records into the process's own
// section. launcher/gpu_metrics/README.md ("The GPU's own counters") says
// what it samples, what it costs and what a crash loses.
#pragma once

#include "preload/config.h"

namespace proflaunch::cuda {

// Registers the writer task when the setting names metrics (no CUPTI call
// here: devices are configured by the writer once the program used them).
void start_pm_sampling(const Config& config) noexcept;

// The program takes the CUPTI profiler for itself (`what`: the entry point
// it called, e.g. cuptiPmSamplingEnable): the shim stops its sampling,
// writes what it decoded, and disables it before the call goes on. One
// session per device: the program's must win.
void pm_sampling_yield_to_program(const char* what) noexcept;

}  // namespace proflaunch::cuda
