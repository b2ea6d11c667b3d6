// The simulated GPU's PM counters (pm_sampling.cpp is the API over them):
// the metrics this simulated chip has and how each is modelled from the
// device's shared state, the raw samples the "hardware" writes, and the
// sampling thread. The model is ../../README.md's "CUPTI PM sampling".
#pragma once

#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <time.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "simgpu_device_state.h"

namespace simgpu_pm {

enum class Model { kKernelShare, kOccupancy, kTensor, kDramRead, kDramWrite, kPcieRead, kPcieWrite, kNvlinkRx, kNvlinkTx };

struct MetricModel {
  const char* name;
  Model model;
  CUpti_MetricType type;
  const char* unit;
  const char* description;
};

// Every metric of the chip, whether switched off or not.
const MetricModel* metrics_begin();
const MetricModel* metrics_end();
// The metric called `name`, null if the chip has none
// (SIMGPU_CUPTI_PM_UNSUPPORTED_METRICS takes some away).
const MetricModel* find_metric(const char* name);

std::string env(const char* name);
// Whether `item` is in the comma list `list` ("*" matches everything).
bool listed(const std::string& list, const std::string& item);
uint64_t clock_ns(clockid_t clock);

// One sample as the "hardware" writes it and decode copies it out.
struct RawSample {
  uint64_t start_ns, end_ns;  // CUPTI's clock (CLOCK_REALTIME ns)
  uint64_t kernel_busy_ns, copy_busy_ns;
  uint64_t h2d_bytes, d2h_bytes, p2p_bytes;
};

// A metric's value over one sample.
double evaluate(const MetricModel& metric, const RawSample& sample);

}  // namespace simgpu_pm

// A PM sampling session on one device (cupti_pmsampling.h keeps it opaque).
struct CUpti_PmSampling_Object {
  size_t device_index = 0;
  simgpu::DeviceStateFile* state = nullptr;
  std::mutex mutex;  // everything below
  std::condition_variable wake;
  bool configured = false;
  bool started = false;
  bool stopping = false;
  uint64_t interval_ns = 0;
  size_t capacity = 0;  // samples the hardware buffer holds
  CUpti_PmSampling_HardwareBuffer_AppendMode append = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  std::deque<simgpu_pm::RawSample> buffer;
  bool overflow = false;
  std::thread sampler;
};

namespace simgpu_pm {

// The sampling thread of a started object (until its `stopping`).
void sample_device(CUpti_PmSampling_Object* object);
// Stops and joins it; nothing if it is not running.
void stop_sampler(CUpti_PmSampling_Object* object);

}  // namespace simgpu_pm
