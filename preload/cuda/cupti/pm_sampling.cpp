// CUPTI PM sampling (pm_sampling.h), as a writer task.
//
// Why the writer thread. Everything here (configuring a device, decoding
// its hardware buffer, evaluating the samples) runs in the writer's cycle:
// a thread of the shim's own that is guarded for life, blocks every signal
// and is on no hook path. The hooks are unchanged; a device is configured
// the first cycle after a recorded call defined it (DeviceInfo), when the
// program has a context on it.
//
// The sequence is CUPTI's documented one (samples/pm_sampling):
// cuptiProfilerInitialize, cuptiDeviceGetChipName, the counter availability
// image, a host object for the chip (cuptiProfilerHostInitialize), the
// metrics added to it and its config image, then cuptiPmSamplingEnable,
// SetConfig (10 kHz, GPU time interval), a counter data image, Start; each
// cycle DecodeData until the hardware buffer is empty, the samples read out
// with CounterDataGetSampleInfo and cuptiProfilerHostEvaluateToGpuValues;
// at exit Stop, the rest decoded, Disable.
//
// Exit. The runtime destroys its contexts from an atexit handler of its own;
// an atexit handler registered when the first device starts (after the
// runtime's, so it runs before it) makes the writer stop, decode and
// disable while the contexts exist. A crash or SIGKILL loses the samples
// not decoded yet: at most one writer cycle (kDecodeEveryNs to 200 ms).
//
// CUPTI is never called under g_mutex. The shim's calls go through
// pointers resolved on libcupti's handle, never through its own exports
// (cupti_interpose.cpp), which are the program's way in.
#include "preload/cuda/cupti/pm_sampling.h"

#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "preload/base/clock.h"
#include "preload/base/lazy_global.h"
#include "preload/base/log.h"
#include "preload/cuda/cupti/cupti_library.h"
#include "preload/cuda/cupti/pm_sampling_device.h"
#include "preload/cuda/cupti/pm_sampling_records.h"
#include "preload/cuda/devices.h"
#include "preload/record/definitions.h"
#include "preload/state/runtime_state.h"
#include "preload/writer/writer.h"
#include "preload/writer/writer_tasks.h"

namespace proflaunch::cuda {
namespace {

constexpr uint64_t kDecodeEveryNs = 20'000'000;     // at most this often (the writer cycles more when busy)
constexpr int kMaxDevices = 64;

enum class State : int { kOff, kRunning, kYieldRequested, kYielded, kFailed };

std::atomic<State> g_state{State::kOff};
bool g_default = true;
// Lazy globals: the writer runs after static destructors (the final cycle).
constinit LazyGlobal<std::vector<PmMetric>> g_metrics;  // set before the task is registered, then read-only
const CuptiLibrary* g_cupti = nullptr;
bool g_initialized = false;  // cuptiProfilerInitialize succeeded
uint64_t g_tried = 0;        // devices configured or given up on
uint32_t g_next_metric = 1;
uint64_t g_last_decode_ns = 0;
bool g_exit_handler = false;
std::mutex g_mutex;            // g_devices' membership (the writer changes it; a yield reads it)
constinit LazyGlobal<std::vector<PmDevice>> g_devices;  // owned by the writer thread
// What it cost (the verbose line at exit; docs/performance.md).
uint64_t g_cpu_ns = 0, g_first_ns = 0;
// The entry point the program took the profiler through (null: the exit).
std::atomic<const char*> g_yield_what{nullptr};

const char* load_api() {
  const char* why = nullptr;
  g_cupti = load_cupti(&why);
  if (g_cupti == nullptr) return why;
  return bind_pm_api(g_cupti->handle, &pm_api());
}

const char* result_name(CUptiResult result) { return cupti_result_name(*g_cupti, result); }

uint64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

uint32_t define_metric(int ordinal, const PmMetric& metric, const char* unsupported_reason) {
  format::GpuMetricDefRecord def{};
  def.header = format::header_for<format::GpuMetricDefRecord>();
  def.metric = g_next_metric++;
  def.device = ordinal;
  def.kind = uint8_t(format::GpuMetricKind::kGauge);
  def.source = uint8_t(format::GpuMetricSource::kCuptiPmSampling);
  def.link = 0xFFFF;
  def.name_string = intern_string(metric.name);
  def.unit_string = intern_string(metric.unit);
  def.unsupported_reason_string = unsupported_reason != nullptr ? intern_string(unsupported_reason) : 0;
  define_record(&def, sizeof def);
  return def.metric;
}

void say(const char* text) { print_line("GPU counters (CUPTI PM sampling): ", text); }

// Every chosen metric of `ordinal` defined as one it does not have (stats
// and SQL list them with the reason).
void define_all_unsupported(int ordinal, const char* reason) {
  for (const PmMetric& metric : *g_metrics) define_metric(ordinal, metric, reason);
}

void permission_refused() {
  say("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: profiling counters are restricted to admin users on this machine "
      "(the driver's NVreg_RestrictProfilingToAdminUsers); allow them with "
      "'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in a file under /etc/modprobe.d (then reload the "
      "nvidia module or reboot), or run as root; going on with NVML's device metrics");
}

// Host side: the config image for `ordinal`'s chip and the metrics it has.
// Null on success, else why (a static or g_reason text).
char g_reason[256];

const char* build_config(int ordinal, PmDevice& device, std::vector<uint8_t>& config, CUptiResult* failure) {
  auto chip = pm_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = size_t(ordinal);
  if ((*failure = pm_api().chip_name(&chip)) != CUPTI_SUCCESS) return "cuptiDeviceGetChipName failed";
  auto available = pm_params<CUpti_PmSampling_GetCounterAvailability_Params>(CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE);
  available.deviceIndex = size_t(ordinal);
  if ((*failure = pm_api().availability(&available)) != CUPTI_SUCCESS) return "cuptiPmSamplingGetCounterAvailability failed";
  std::vector<uint8_t> image(available.counterAvailabilityImageSize);
  available.pCounterAvailabilityImage = image.data();
  if ((*failure = pm_api().availability(&available)) != CUPTI_SUCCESS) return "cuptiPmSamplingGetCounterAvailability failed";
  auto host = pm_params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  host.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
  host.pChipName = chip.pChipName;
  host.pCounterAvailabilityImage = image.data();
  if ((*failure = pm_api().host_initialize(&host)) != CUPTI_SUCCESS) return "cuptiProfilerHostInitialize failed";
  device.host = host.pHostObject;
  // One metric at a time, so that one the chip lacks is named, not the set.
  std::vector<std::string> missing;
  std::vector<const PmMetric*> have;
  for (const PmMetric& metric : *g_metrics) {
    const char* name = metric.cupti_name.c_str();
    auto add = pm_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    add.pHostObject = device.host;
    add.ppMetricNames = &name;
    add.numMetrics = 1;
    const CUptiResult added = pm_api().add_metrics(&add);
    if (added == CUPTI_SUCCESS) {
      have.push_back(&metric);
      continue;
    }
    char reason[160];
    std::snprintf(reason, sizeof reason, "%s: not a metric of %s", result_name(added), chip.pChipName);
    define_metric(ordinal, metric, reason);
    missing.push_back(metric.cupti_name);
    *failure = added;
  }
  if (!missing.empty() && !g_default) {
    for (const PmMetric* metric : have)
      define_metric(ordinal, *metric, "not sampled: --gpu-metrics-counters names a metric this GPU does not have");
    // The user's LIST names something this chip does not have: refused as
    // a whole, so that nobody reads a partial set as the one asked for.
    std::string names;
    for (const std::string& m : missing) names += (names.empty() ? "'" : ", '") + m + "'";
    std::snprintf(g_reason, sizeof g_reason,
                  "--gpu-metrics-counters names %s, which GPU %d (%s) does not have (%s); the list is refused, no "
                  "counters are sampled on it",
                  names.c_str(), ordinal, chip.pChipName, result_name(*failure));
    return g_reason;
  }
  for (const PmMetric* metric : have) {
    device.names.push_back(metric->cupti_name.c_str());
    device.metric_ids.push_back(define_metric(ordinal, *metric, nullptr));
  }
  if (device.names.empty()) return "the chip has none of the DEFAULT metrics";
  if (!missing.empty() && runtime::config().verbose) {
    std::string names;
    for (const std::string& m : missing) names += " " + m;
    print_line("GPU counters (CUPTI PM sampling): not on this chip, left out:", names.c_str());
  }
  auto size = pm_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = device.host;
  if ((*failure = pm_api().config_size(&size)) != CUPTI_SUCCESS) return "cuptiProfilerHostGetConfigImageSize failed";
  config.resize(size.configImageSize);
  auto get = pm_params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  get.pHostObject = device.host;
  get.configImageSize = config.size();
  get.pConfigImage = config.data();
  if ((*failure = pm_api().config_image(&get)) != CUPTI_SUCCESS) return "cuptiProfilerHostGetConfigImage failed";
  *failure = CUPTI_SUCCESS;
  return nullptr;
}

// Runs before the runtime's own exit handler (registered after it).
void stop_before_runtime_exit() noexcept {
  State expected = State::kRunning;
  if (!g_state.compare_exchange_strong(expected, State::kYieldRequested)) return;
  writer_flush_and_wait(FlushGoal::kFlush, 2000);
}

void configure_new_devices() {
  const uint64_t fresh = defined_devices() & ~g_tried;
  if (fresh == 0) return;
  if (!g_initialized) {
    if (const char* why = load_api()) {
      print_line("GPU counters (CUPTI PM sampling): ", why, "; going on with NVML's device metrics");
      g_state.store(State::kFailed);
      return;
    }
    auto init = pm_params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    const CUptiResult result = pm_api().profiler_initialize(&init);
    if (result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
      permission_refused();
      g_state.store(State::kFailed);
      return;
    }
    if (result != CUPTI_SUCCESS) {
      print_line("GPU counters (CUPTI PM sampling): cuptiProfilerInitialize failed (", result_name(result),
                 "); going on with NVML's device metrics");
      g_state.store(State::kFailed);
      return;
    }
    g_initialized = true;
  }
  for (int ordinal = 0; ordinal < kMaxDevices; ++ordinal) {
    if ((fresh & (uint64_t{1} << ordinal)) == 0) continue;
    g_tried |= uint64_t{1} << ordinal;
    PmDevice device;
    device.ordinal = ordinal;
    std::vector<uint8_t> config;
    CUptiResult failure = CUPTI_SUCCESS;
    const char* why = build_config(ordinal, device, config, &failure);
    if (why == nullptr) why = start_pm_device(device, config, &failure);
    if (why == nullptr) {
      std::lock_guard lock(g_mutex);
      g_devices->push_back(std::move(device));
      continue;
    }
    release_pm_device(device);
    if (failure == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
      permission_refused();
      define_all_unsupported(ordinal, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
      g_state.store(State::kFailed);
      return;
    }
    char line[512];
    if (why == g_reason) {
      std::snprintf(line, sizeof line, "%s; going on with NVML's device metrics", why);
    } else {
      std::snprintf(line, sizeof line, "GPU %d: %s (%s); going on with NVML's device metrics", ordinal, why,
                    result_name(failure));
      define_all_unsupported(ordinal, result_name(failure));
    }
    say(line);
  }
  if (!g_devices->empty() && !g_exit_handler) {
    g_exit_handler = true;
    std::atexit(stop_before_runtime_exit);
  }
}

void stop_all(WriterRecordSink& sink) {
  std::vector<PmDevice> devices;
  {
    std::lock_guard lock(g_mutex);
    devices.swap(*g_devices);
  }
  for (PmDevice& device : devices) stop_pm_device(device, sink);
}

void report_cost() {
  if (!runtime::config().verbose || pm_decode_counts().samples == 0) return;
  char line[200];
  const double seconds = double(now_ns() - g_first_ns) / 1e9;
  std::snprintf(line, sizeof line,
                "GPU counters (CUPTI PM sampling): %llu samples, %llu records in %.2f s; decode CPU %.1f ms "
                "(%.2f ms per second)",
                static_cast<unsigned long long>(pm_decode_counts().samples),
                static_cast<unsigned long long>(pm_decode_counts().records), seconds,
                double(g_cpu_ns) / 1e6, seconds > 0 ? double(g_cpu_ns) / 1e6 / seconds : 0.0);
  print_line(line);
}

void before_drain() noexcept {}

void run(WriterRecordSink& sink, bool final) noexcept {
  const State state = g_state.load(std::memory_order_acquire);
  if (state != State::kRunning && state != State::kYieldRequested) return;
  const uint64_t cpu_start = thread_cpu_ns();
  const uint64_t now = now_ns();
  if (g_first_ns == 0) g_first_ns = now;
  if (state == State::kYieldRequested || final) {
    stop_all(sink);
    if (const char* what = g_yield_what.load(std::memory_order_acquire))
      print_line("GPU counters (CUPTI PM sampling): stopped, the program uses the CUPTI profiler itself (", what,
                 ")");
    g_state.store(State::kYielded, std::memory_order_release);
    g_cpu_ns += thread_cpu_ns() - cpu_start;
    report_cost();
    return;
  }
  configure_new_devices();
  if (g_state.load() == State::kRunning && now - g_last_decode_ns >= kDecodeEveryNs) {
    g_last_decode_ns = now;
    for (PmDevice& device : *g_devices) decode_pm_device(device, sink);
  }
  if (g_state.load() == State::kFailed) stop_all(sink);
  g_cpu_ns += thread_cpu_ns() - cpu_start;
}

void reset_in_child() noexcept {
  // The PM sampling objects are the parent's: the child does not sample
  // (CUPTI does not follow fork), and never touches them.
  new (&g_mutex) std::mutex();
  g_devices->clear();
  g_state.store(State::kOff);
}

const WriterTask kTask{before_drain, run, reset_in_child};

}  // namespace

void start_pm_sampling(const Config& config) noexcept {
  if (config.gpu_metrics_counters[0] == '\0') return;
  g_default = pm_metrics_are_default(config.gpu_metrics_counters);
  *g_metrics = choose_pm_metrics(config.gpu_metrics_counters);
  if (g_metrics->empty()) return;
  if (!writer_register_task(&kTask)) return;
  g_state.store(State::kRunning, std::memory_order_release);
}

void pm_sampling_yield_to_program(const char* what) noexcept {
  if (g_state.load(std::memory_order_acquire) != State::kRunning) return;
  // Named before the state changes: the writer may run the moment it does.
  g_yield_what.store(what, std::memory_order_release);
  State expected = State::kRunning;
  if (!g_state.compare_exchange_strong(expected, State::kYieldRequested)) return;
  if (on_writer_thread()) return;  // never: the shim does not call its exports
  writer_flush_and_wait(FlushGoal::kFlush, 2000);
}

}  // namespace proflaunch::cuda
