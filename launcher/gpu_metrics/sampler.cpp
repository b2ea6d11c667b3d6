#include "launcher/gpu_metrics/sampler.h"

#include <pthread.h>
#include <signal.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <condition_variable>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "formats/records.h"
#include "formats/trace_builder.h"
#include "launcher/gpu_metrics/nvml_library.h"

namespace proflaunch::launcher::gpu_metrics {
namespace {

using format::GpuMetricKind;

uint64_t monotonic_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return uint64_t(t.tv_sec) * 1'000'000'000ull + uint64_t(t.tv_nsec);
}
uint64_t clock_ns(clockid_t clock) {
  timespec t;
  clock_gettime(clock, &t);
  return uint64_t(t.tv_sec) * 1'000'000'000ull + uint64_t(t.tv_nsec);
}

// What one metric is read from.
enum class Read {
  kGpuUtilization, kMemoryUtilization, kMemoryUsed, kMemoryTotal, kSmClock, kMemoryClock, kPower, kPowerLimit,
  kTemperature, kThrottleReasons, kPcieTx, kPcieRx, kPcieLinkGen, kPcieLinkWidth, kPcieMaxLinkGen,
  kPcieMaxLinkWidth, kNvlinkTx, kNvlinkRx, kEccErrors,
};

struct MetricSpec {
  Read read;
  // A rate over the time since the previous reading (utilization,
  // throughput) is written at every reading, so that each sample's window
  // is the time since the one before; other gauges only when they change.
  const char* name;
  const char* unit;
  GpuMetricKind kind;
};

constexpr MetricSpec kDeviceMetrics[] = {
    {Read::kGpuUtilization, "gpu_utilization", "%", GpuMetricKind::kGauge},
    {Read::kMemoryUtilization, "memory_utilization", "%", GpuMetricKind::kGauge},
    {Read::kMemoryUsed, "memory_used", "bytes", GpuMetricKind::kGauge},
    {Read::kMemoryTotal, "memory_total", "bytes", GpuMetricKind::kGauge},
    {Read::kSmClock, "sm_clock", "MHz", GpuMetricKind::kGauge},
    {Read::kMemoryClock, "memory_clock", "MHz", GpuMetricKind::kGauge},
    {Read::kPower, "power", "mW", GpuMetricKind::kGauge},
    {Read::kPowerLimit, "power_limit", "mW", GpuMetricKind::kGauge},
    {Read::kTemperature, "temperature", "C", GpuMetricKind::kGauge},
    {Read::kThrottleReasons, "throttle_reasons", "bitmask", GpuMetricKind::kGauge},
    {Read::kPcieTx, "pcie_tx", "KiB/s", GpuMetricKind::kGauge},
    {Read::kPcieRx, "pcie_rx", "KiB/s", GpuMetricKind::kGauge},
    {Read::kPcieLinkGen, "pcie_link_gen", "", GpuMetricKind::kGauge},
    {Read::kPcieLinkWidth, "pcie_link_width", "", GpuMetricKind::kGauge},
    {Read::kPcieMaxLinkGen, "pcie_max_link_gen", "", GpuMetricKind::kGauge},
    {Read::kPcieMaxLinkWidth, "pcie_max_link_width", "", GpuMetricKind::kGauge},
    {Read::kEccErrors, "ecc_errors", "", GpuMetricKind::kInstant},
};

bool is_rate(Read read) {
  return read == Read::kGpuUtilization || read == Read::kMemoryUtilization || read == Read::kPcieTx ||
         read == Read::kPcieRx || read == Read::kNvlinkTx || read == Read::kNvlinkRx;
}

struct Metric {
  uint32_t id = 0;
  size_t device = 0;  // index into State::devices
  MetricSpec spec;
  uint16_t link = 0xFFFF;
  bool supported = true;
  std::string unsupported_reason;
  bool polled = true;  // false: written from NVML's event set (xid)
  bool have_value = false;
  uint64_t value = 0;
  uint64_t read_ns = 0;  // when its device was read
  uint64_t written_value = 0;
  bool written = false;
  // Cumulative counters read as rates (NVLink KiB, ECC counts): the previous reading.
  uint64_t previous_counter = 0;
  uint64_t previous_ns = 0;
  bool have_counter = false;
};

struct Device {
  unsigned nvml_index = 0;
  nvml::Device handle = nullptr;
  std::string uuid;  // "GPU-..."
  std::string name;
  uint64_t total_bytes = 0;
  uint8_t uuid_bytes[16] = {};
};

// "GPU-53494d47-5055-..." -> its 16 bytes (false if it is not that form).
bool parse_uuid(const std::string& text, uint8_t out[16]) {
  std::string hex;
  for (size_t i = text.rfind("GPU-", 0) == 0 ? 4 : 0; i < text.size(); ++i)
    if (text[i] != '-') hex += text[i];
  if (hex.size() != 32) return false;
  for (int i = 0; i < 16; ++i) {
    unsigned byte = 0;
    if (std::sscanf(hex.c_str() + 2 * i, "%2x", &byte) != 1) return false;
    out[i] = uint8_t(byte);
  }
  return true;
}

}  // namespace

std::vector<int> visible_devices(const char* text, const std::vector<std::string>& uuids) {
  std::vector<int> visible;
  if (text == nullptr) {
    for (size_t i = 0; i < uuids.size(); ++i) visible.push_back(int(i));
    return visible;
  }
  std::string list = text;
  size_t at = 0;
  while (at <= list.size() && !list.empty()) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    std::string entry = list.substr(at, comma - at);
    while (!entry.empty() && entry.front() == ' ') entry.erase(0, 1);
    int found = -1;
    if (!entry.empty() && entry.find_first_not_of("0123456789") == std::string::npos) {
      const long index = std::strtol(entry.c_str(), nullptr, 10);
      if (index < long(uuids.size())) found = int(index);
    } else if (entry.rfind("GPU-", 0) == 0) {
      for (size_t i = 0; i < uuids.size(); ++i) {
        if (uuids[i].rfind(entry, 0) != 0) continue;
        if (found >= 0) {  // an ambiguous prefix matches nothing
          found = -1;
          break;
        }
        found = int(i);
      }
    }
    if (found < 0) break;
    for (int seen : visible)
      if (seen == found) found = -1;
    if (found < 0) break;
    visible.push_back(found);
    at = comma + 1;
  }
  return visible;
}

struct Sampler::State {
  SamplerOptions options;
  NvmlLibrary nvml;
  std::vector<Device> devices;
  std::vector<Metric> metrics;
  nvml::EventSet events = nullptr;
  uint32_t xid_metric_base = 0;  // metric id of device 0's "xid"; device i: base + i
  std::vector<uint32_t> xid_metrics;

  std::FILE* file = nullptr;
  std::unique_ptr<format::TraceBuilder> trace;
  uint64_t section = 0;
  uint32_t tid = 0;
  uint64_t last_flush_ns = 0;
  SamplerCounts counts;

  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  bool defined = false;

  void sample(bool last);
  void write(Metric& metric, uint64_t at_ns, uint64_t value);
  void run();
};

void Sampler::State::write(Metric& metric, uint64_t at_ns, uint64_t value) {
  format::GpuMetricSampleRecord record{};
  record.metric = metric.id;
  record.time_ns = at_ns;
  record.value = value;
  trace->event(section, tid, record);
  metric.written = true;
  metric.written_value = value;
  ++counts.samples;
}

// Reads every device once. The first time, a metric that fails is defined
// as unsupported, with NVML's reason, and never read again.
void Sampler::State::sample(bool last) {
  std::vector<std::string> unsupported_lines;
  for (size_t d = 0; d < devices.size(); ++d) {
    const Device& device = devices[d];
    nvml::Utilization utilization{};
    nvml::Memory memory{};
    nvml::Return utilization_result = nvml.DeviceGetUtilizationRates != nullptr
                                          ? nvml.DeviceGetUtilizationRates(device.handle, &utilization)
                                          : nvml::kNotSupported;
    nvml::Return memory_result =
        nvml.DeviceGetMemoryInfo != nullptr ? nvml.DeviceGetMemoryInfo(device.handle, &memory) : nvml::kNotSupported;
    const uint64_t now = monotonic_ns();
    for (Metric& metric : metrics) {
      if (metric.device != d || !metric.supported || !metric.polled) continue;
      nvml::Return result = nvml::kNotSupported;
      uint64_t value = 0;
      unsigned number = 0;
      unsigned long long wide = 0;
      auto call = [&](auto function, auto... args) {
        if (function == nullptr) return;
        result = function(device.handle, args...);
      };
      switch (metric.spec.read) {
        case Read::kGpuUtilization: result = utilization_result; value = utilization.gpu; break;
        case Read::kMemoryUtilization: result = utilization_result; value = utilization.memory; break;
        case Read::kMemoryUsed: result = memory_result; value = memory.used; break;
        case Read::kMemoryTotal: result = memory_result; value = memory.total; break;
        case Read::kSmClock: call(nvml.DeviceGetClockInfo, nvml::kClockSm, &number); value = number; break;
        case Read::kMemoryClock: call(nvml.DeviceGetClockInfo, nvml::kClockMem, &number); value = number; break;
        case Read::kPower: call(nvml.DeviceGetPowerUsage, &number); value = number; break;
        case Read::kPowerLimit: call(nvml.DeviceGetEnforcedPowerLimit, &number); value = number; break;
        case Read::kTemperature: call(nvml.DeviceGetTemperature, nvml::kTemperatureGpu, &number); value = number; break;
        case Read::kThrottleReasons: call(nvml.DeviceGetCurrentClocksThrottleReasons, &wide); value = wide; break;
        case Read::kPcieTx: call(nvml.DeviceGetPcieThroughput, nvml::kPcieTxBytes, &number); value = number; break;
        case Read::kPcieRx: call(nvml.DeviceGetPcieThroughput, nvml::kPcieRxBytes, &number); value = number; break;
        case Read::kPcieLinkGen: call(nvml.DeviceGetCurrPcieLinkGeneration, &number); value = number; break;
        case Read::kPcieLinkWidth: call(nvml.DeviceGetCurrPcieLinkWidth, &number); value = number; break;
        case Read::kPcieMaxLinkGen: call(nvml.DeviceGetMaxPcieLinkGeneration, &number); value = number; break;
        case Read::kPcieMaxLinkWidth: call(nvml.DeviceGetMaxPcieLinkWidth, &number); value = number; break;
        case Read::kEccErrors:
          call(nvml.DeviceGetTotalEccErrors, nvml::kMemoryErrorUncorrected, nvml::kVolatileEcc, &wide);
          value = wide;
          break;
        case Read::kNvlinkTx:
        case Read::kNvlinkRx: {
          nvml::FieldValue field{};
          field.fieldId = metric.spec.read == Read::kNvlinkTx ? nvml::kFieldNvlinkDataTx : nvml::kFieldNvlinkDataRx;
          field.scopeId = metric.link;
          call(nvml.DeviceGetFieldValues, 1, &field);
          if (result == nvml::kSuccess) result = field.nvmlReturn;
          value = field.value.ullVal;  // KiB so far
          break;
        }
      }
      if (result != nvml::kSuccess) {
        if (!defined) {
          metric.supported = false;
          metric.unsupported_reason = nvml.error_text(result);
          unsupported_lines.push_back(metric.spec.name + std::string(" on GPU ") + std::to_string(device.nvml_index) +
                                      ": " + metric.unsupported_reason);
        }
        continue;
      }
      // Counters become rates (NVLink) or instants of what is new (ECC).
      if (metric.spec.read == Read::kNvlinkTx || metric.spec.read == Read::kNvlinkRx ||
          metric.spec.read == Read::kEccErrors) {
        const uint64_t counter = value;
        const bool first = !metric.have_counter;
        const uint64_t delta = counter >= metric.previous_counter ? counter - metric.previous_counter : 0;
        const uint64_t dt = now - metric.previous_ns;
        metric.previous_counter = counter;
        metric.previous_ns = now;
        metric.have_counter = true;
        if (metric.spec.read == Read::kEccErrors) {
          if (!first && delta > 0) write(metric, now, delta);
          continue;
        }
        if (first) continue;
        value = dt > 0 ? delta * 1'000'000'000ull / dt : 0;
      }
      metric.value = value;
      metric.read_ns = now;
      metric.have_value = true;
    }
  }
  if (!defined) {
    // Definitions once the first reading said what each device has.
    for (size_t d = 0; d < devices.size(); ++d) {
      format::DeviceSpec spec;
      spec.ordinal = int32_t(d);
      spec.name = devices[d].name;
      spec.multiprocessor_count = 0;
      spec.total_memory_bytes = devices[d].total_bytes;
      std::memcpy(spec.uuid, devices[d].uuid_bytes, 16);
      trace->device(section, spec);
    }
    for (const Metric& metric : metrics) {
      format::GpuMetricDefRecord def{};
      def.metric = metric.id;
      def.device = int32_t(metric.device);
      def.kind = uint8_t(metric.spec.kind);
      def.source = uint8_t(format::GpuMetricSource::kNvml);
      def.link = metric.link;
      def.name_string = trace->string(section, metric.spec.name);
      def.unit_string = trace->string(section, metric.spec.unit);
      if (!metric.supported)
        def.unsupported_reason_string = trace->string(section, metric.unsupported_reason);
      trace->define(section, def);
    }
    defined = true;
    if (options.verbose)
      for (const std::string& line : unsupported_lines) options.say("device metrics: left out " + line);
  }
  // XID errors: NVML's event set, without waiting.
  if (events != nullptr && nvml.EventSetWait_v2 != nullptr) {
    nvml::EventData data{};
    for (int i = 0; i < 64 && nvml.EventSetWait_v2(events, &data, 0) == nvml::kSuccess; ++i) {
      for (size_t d = 0; d < devices.size(); ++d)
        if (devices[d].handle == data.device && (data.eventType & nvml::kEventXid) != 0 &&
            metrics[xid_metrics[d] - 1].supported)
          write(metrics[xid_metrics[d] - 1], monotonic_ns(), data.eventData);
    }
  }
  const uint64_t now = monotonic_ns();
  for (Metric& metric : metrics) {
    if (!metric.have_value || metric.spec.kind != GpuMetricKind::kGauge) continue;
    if (!metric.written || metric.value != metric.written_value || last || is_rate(metric.spec.read))
      write(metric, metric.read_ns, metric.value);
    metric.have_value = false;
  }
  ++counts.ticks;
  if (now - last_flush_ns >= 1'000'000'000ull || last) {
    // At least once a second the samples reach the part: a launcher killed
    // later loses at most that second.
    trace->flush();
    std::fflush(file);
    last_flush_ns = now;
  }
}

void Sampler::State::run() {
  const uint64_t period_ns = uint64_t(1e9 / options.hz);
  uint64_t next = monotonic_ns();
  std::unique_lock lock(mutex);
  while (!stopping) {
    lock.unlock();
    sample(false);
    lock.lock();
    next += period_ns;
    const uint64_t now = monotonic_ns();
    if (next < now) next = now;  // fell behind: no burst of catch-up samples
    wake.wait_for(lock, std::chrono::nanoseconds(next - now), [&] { return stopping; });
  }
  lock.unlock();
  sample(true);
  timespec cpu{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
    counts.cpu_ns = uint64_t(cpu.tv_sec) * 1'000'000'000ull + uint64_t(cpu.tv_nsec);
}

Sampler::Sampler() = default;
Sampler::~Sampler() { stop(); }

bool Sampler::start(const SamplerOptions& options) {
  auto state = std::make_unique<State>();
  state->options = options;
  std::string why;
  if (!state->nvml.open(&why)) {
    options.say("device metrics off: no NVML (" + why + ")");
    return false;
  }
  NvmlLibrary& nvml = state->nvml;
  unsigned count = 0;
  if (nvml.DeviceGetCount_v2(&count) != nvml::kSuccess || count == 0) {
    options.say("device metrics off: NVML sees no device");
    return false;
  }
  std::vector<Device> all(count);
  std::vector<std::string> uuids(count);
  for (unsigned i = 0; i < count; ++i) {
    Device& device = all[i];
    device.nvml_index = i;
    if (nvml.DeviceGetHandleByIndex_v2(i, &device.handle) != nvml::kSuccess) continue;
    char text[96] = {};
    if (nvml.DeviceGetUUID != nullptr && nvml.DeviceGetUUID(device.handle, text, sizeof text) == nvml::kSuccess) {
      device.uuid = text;
      parse_uuid(device.uuid, device.uuid_bytes);
    }
    text[0] = '\0';
    if (nvml.DeviceGetName != nullptr && nvml.DeviceGetName(device.handle, text, sizeof text) == nvml::kSuccess)
      device.name = text;
    nvml::Memory memory{};
    if (nvml.DeviceGetMemoryInfo != nullptr && nvml.DeviceGetMemoryInfo(device.handle, &memory) == nvml::kSuccess)
      device.total_bytes = memory.total;
    uuids[i] = device.uuid;
  }
  for (int index : visible_devices(options.cuda_visible_devices, uuids))
    if (all[size_t(index)].handle != nullptr) state->devices.push_back(all[size_t(index)]);
  if (state->devices.empty()) {
    options.say("device metrics off: CUDA_VISIBLE_DEVICES leaves no device NVML knows");
    return false;
  }

  // The metrics of each device; NVLink per link that is up.
  uint32_t next_id = 1;
  for (size_t d = 0; d < state->devices.size(); ++d) {
    for (const MetricSpec& spec : kDeviceMetrics) {
      Metric metric;
      metric.id = next_id++;
      metric.device = d;
      metric.spec = spec;
      state->metrics.push_back(metric);
    }
    for (unsigned link = 0; nvml.DeviceGetNvLinkState != nullptr && link < nvml::kMaxNvlinks; ++link) {
      int active = 0;
      if (nvml.DeviceGetNvLinkState(state->devices[d].handle, link, &active) != nvml::kSuccess) break;
      if (active == 0) continue;
      for (Read read : {Read::kNvlinkTx, Read::kNvlinkRx}) {
        Metric metric;
        metric.id = next_id++;
        metric.device = d;
        metric.spec = {read, read == Read::kNvlinkTx ? "nvlink_tx" : "nvlink_rx", "KiB/s", GpuMetricKind::kGauge};
        metric.link = uint16_t(link);
        state->metrics.push_back(metric);
      }
    }
    Metric xid;
    xid.id = next_id++;
    xid.device = d;
    xid.spec = {Read::kEccErrors, "xid", "", GpuMetricKind::kInstant};
    xid.polled = false;
    state->xid_metrics.push_back(xid.id);
    state->metrics.push_back(xid);
  }
  if (nvml.EventSetCreate != nullptr && nvml.DeviceRegisterEvents != nullptr &&
      nvml.EventSetCreate(&state->events) == nvml::kSuccess) {
    for (size_t d = 0; d < state->devices.size(); ++d) {
      const nvml::Return result =
          nvml.DeviceRegisterEvents(state->devices[d].handle, nvml::kEventXid, state->events);
      Metric& xid = state->metrics[state->xid_metrics[d] - 1];
      if (result != nvml::kSuccess) {
        xid.supported = false;
        xid.unsupported_reason = nvml.error_text(result);
      }
    }
  } else {
    for (uint32_t id : state->xid_metrics) {
      state->metrics[id - 1].supported = false;
      state->metrics[id - 1].unsupported_reason = "NVML has no event sets";
    }
  }

  // The part: a section of its own.
  // Named to sort after every "<pid>-<section>.part": the join copies it
  // last, so a device's GPU process is named by the program's sections.
  const std::string path = options.parts_dir + "/~gpu-metrics-" + std::to_string(getpid()) + ".part";
  state->file = std::fopen(path.c_str(), "wbe");
  if (state->file == nullptr) {
    options.say("device metrics off: cannot create " + path + ": " + std::strerror(errno));
    return false;
  }
  format::TraceBuilder::Options builder_options;
  state->trace = std::make_unique<format::TraceBuilder>(builder_options, state->file);
  if (getrandom(&state->section, sizeof state->section, 0) != sizeof state->section || state->section == 0)
    state->section = clock_ns(CLOCK_REALTIME) ^ (uint64_t(getpid()) << 40);
  state->tid = uint32_t(getpid());
  format::ProcessSpec process;
  process.pid = uint32_t(getpid());
  process.ppid = uint32_t(getppid());
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) process.host = host;
  process.argv = {"proflaunch (device metrics)"};
  process.executable = "proflaunch";
  process.flags = format::kProcessDeviceSampler;
  process.monotonic_ns = clock_ns(CLOCK_MONOTONIC);
  process.realtime_ns = clock_ns(CLOCK_REALTIME);
  process.boottime_ns = clock_ns(CLOCK_BOOTTIME);
  process.tool_version = PROFLAUNCH_VERSION;
  state->trace->process(state->section, process);
  state->trace->thread(state->section, state->tid, "device sampler");
  state->counts.devices = state->devices.size();

  State* raw = state.get();
  state_ = std::move(state);
  // The thread takes no signal: they are the launcher's to forward.
  sigset_t all_signals, previous;
  sigfillset(&all_signals);
  pthread_sigmask(SIG_SETMASK, &all_signals, &previous);
  thread_ = std::thread([raw] { raw->run(); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return true;
}

SamplerCounts Sampler::stop() {
  if (!state_) return {};
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
  }
  state_->wake.notify_all();
  if (thread_.joinable()) thread_.join();
  State& state = *state_;
  state.trace->section_end(state.section, monotonic_ns(), state.counts.samples, 0);
  state.trace->flush();
  std::fclose(state.file);
  if (state.events != nullptr && state.nvml.EventSetFree != nullptr) state.nvml.EventSetFree(state.events);
  state.nvml.close();
  SamplerCounts counts = state.counts;
  state_.reset();
  return counts;
}

}  // namespace proflaunch::launcher::gpu_metrics
