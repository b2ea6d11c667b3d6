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

bool is_rate(Read read) {
  return read == Read::kGpuUtilization || read == Read::kMemoryUtilization || read == Read::kPcieTx ||
         read == Read::kPcieRx || read == Read::kNvlinkTx || read == Read::kNvlinkRx;
}

struct Metric {
  uint32_t id = 0;
  size_t device = 0;  // index into State::devices
  MetricSpec spec;
  bool supported = true;
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

// A sampled device: the source that reads it and its index there.
struct Device {
  DeviceSource* source = nullptr;
  size_t index = 0;
};

// One list of visible devices applied to `devices`: indices into it or UUID
// prefixes; ends at the first entry that matches nothing or repeats one.
std::vector<int> apply_amd_list(const char* text, const std::vector<int>& devices,
                                const std::vector<std::string>& uuids) {
  if (text == nullptr) return devices;
  std::vector<int> kept;
  const std::string list = text;
  size_t at = 0;
  while (at < list.size()) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    std::string entry = list.substr(at, comma - at);
    at = comma + 1;
    while (!entry.empty() && entry.front() == ' ') entry.erase(0, 1);
    int found = -1;
    if (!entry.empty() && entry.find_first_not_of("0123456789") == std::string::npos) {
      const unsigned long index = std::strtoul(entry.c_str(), nullptr, 10);
      if (index < devices.size()) found = devices[index];
    } else if (entry.rfind("GPU-", 0) == 0) {
      for (int device : devices)
        if (uuids[size_t(device)].rfind(entry, 0) == 0) {
          found = device;
          break;
        }
    }
    for (int seen : kept)
      if (seen == found) found = -1;
    if (found < 0) break;
    kept.push_back(found);
  }
  return kept;
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

std::vector<int> amd_visible_devices(const AmdVisibility& visibility, const std::vector<std::string>& uuids) {
  std::vector<int> devices;
  for (size_t i = 0; i < uuids.size(); ++i) devices.push_back(int(i));
  devices = apply_amd_list(visibility.rocr_visible_devices, devices, uuids);
  const char* hip = visibility.hip_visible_devices != nullptr ? visibility.hip_visible_devices
                                                              : visibility.cuda_visible_devices;
  return apply_amd_list(hip, devices, uuids);
}

struct Sampler::State {
  SamplerOptions options;
  std::vector<std::unique_ptr<DeviceSource>> sources;
  std::vector<Device> devices;
  std::vector<Metric> metrics;

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

  const SourceDevice& info(size_t d) const { return devices[d].source->devices()[devices[d].index]; }
  void define();
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

// The definitions, once the first reading said what each device has.
void Sampler::State::define() {
  for (size_t d = 0; d < devices.size(); ++d) {
    const SourceDevice& device = info(d);
    format::DeviceSpec spec;
    spec.ordinal = int32_t(d);
    spec.vendor = devices[d].source->vendor();
    spec.name = device.name;
    spec.multiprocessor_count = 0;
    spec.total_memory_bytes = device.total_bytes;
    std::memcpy(spec.uuid, device.uuid_bytes, 16);
    trace->device(section, spec);
  }
  for (const Metric& metric : metrics) {
    format::GpuMetricDefRecord def{};
    def.metric = metric.id;
    def.device = int32_t(metric.device);
    def.kind = uint8_t(metric.spec.kind);
    def.source = uint8_t(devices[metric.device].source->source());
    def.link = metric.spec.link;
    def.name_string = trace->string(section, metric.spec.name);
    def.unit_string = trace->string(section, metric.spec.unit);
    if (!metric.supported) def.unsupported_reason_string = trace->string(section, metric.spec.unsupported_reason);
    trace->define(section, def);
  }
  defined = true;
}

// Reads every device once. The first time, a metric that fails is defined
// as unsupported, with the library's reason, and never read again.
void Sampler::State::sample(bool last) {
  std::vector<std::string> unsupported_lines;
  for (size_t d = 0; d < devices.size(); ++d) {
    DeviceSource& source = *devices[d].source;
    const size_t index = devices[d].index;
    source.begin_reading(index);
    const uint64_t now = monotonic_ns();
    for (Metric& metric : metrics) {
      if (metric.device != d || !metric.supported || !metric.spec.polled) continue;
      uint64_t value = 0;
      std::string why;
      if (!source.read(index, metric.spec, &value, &why)) {
        if (!defined) {
          metric.supported = false;
          metric.spec.unsupported_reason = why;
          unsupported_lines.push_back(metric.spec.name + std::string(" on ") +
                                      (source.vendor() == format::Vendor::kAmd ? "AMD GPU " : "GPU ") +
                                      std::to_string(info(d).index) + ": " + why);
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
    define();
    if (options.verbose)
      for (const std::string& line : unsupported_lines) options.say("device metrics: left out " + line);
  }
  // Instants that come as events (XID errors), without waiting.
  for (size_t s = 0; s < sources.size(); ++s) {
    sources[s]->poll_events([&](size_t index, uint64_t value) {
      for (Metric& metric : metrics)
        if (devices[metric.device].source == sources[s].get() && devices[metric.device].index == index &&
            !metric.spec.polled && metric.supported)
          write(metric, monotonic_ns(), value);
    });
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
  // A machine may have NVIDIA devices, AMD ones, or both: each library that
  // is there and sees a device is a source.
  std::string nvml_why, rocm_smi_why;
  if (auto nvml = open_nvml_source(options.cuda_visible_devices, &nvml_why)) state->sources.push_back(std::move(nvml));
  AmdVisibility amd;
  amd.rocr_visible_devices = options.rocr_visible_devices;
  amd.hip_visible_devices = options.hip_visible_devices;
  amd.cuda_visible_devices = options.cuda_visible_devices;
  if (auto smi = open_rocm_smi_source(amd, &rocm_smi_why)) state->sources.push_back(std::move(smi));
  if (state->sources.empty()) {
    options.say("device metrics off: no NVML (" + nvml_why + "), no ROCm SMI (" + rocm_smi_why + ")");
    return false;
  }
  // One library missing is the normal case (a machine of one vendor): said with -v only.
  if (options.verbose) {
    if (!nvml_why.empty()) options.say("device metrics: no NVML (" + nvml_why + ")");
    if (!rocm_smi_why.empty()) options.say("device metrics: no ROCm SMI (" + rocm_smi_why + ")");
  }
  uint32_t next_id = 1;
  for (auto& source : state->sources) {
    for (size_t i = 0; i < source->devices().size(); ++i) {
      const size_t d = state->devices.size();
      state->devices.push_back({source.get(), i});
      for (MetricSpec& spec : source->metrics(i)) {
        Metric metric;
        metric.id = next_id++;
        metric.device = d;
        metric.supported = spec.unsupported_reason.empty();
        metric.spec = std::move(spec);
        state->metrics.push_back(std::move(metric));
      }
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
  state.sources.clear();
  SamplerCounts counts = state.counts;
  state_.reset();
  return counts;
}

}  // namespace proflaunch::launcher::gpu_metrics
