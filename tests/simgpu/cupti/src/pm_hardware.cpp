#include "pm_hardware.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

namespace simgpu_pm {
namespace {

constexpr MetricModel kMetrics[] = {
    {"gr__cycles_active.avg.pct_of_peak_sustained_elapsed", Model::kKernelShare, CUPTI_METRIC_TYPE_RATIO, "%",
     "graphics/compute engine active"},
    {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed", Model::kKernelShare, CUPTI_METRIC_TYPE_RATIO, "%",
     "SMs with at least one warp in flight"},
    {"sm__warps_active_realtime.avg.pct_of_peak_sustained_elapsed", Model::kOccupancy, CUPTI_METRIC_TYPE_RATIO, "%",
     "warps in flight of the SMs' maximum"},
    {"sm__pipe_shared_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed", Model::kTensor,
     CUPTI_METRIC_TYPE_RATIO, "%", "tensor (shared) pipe active"},
    {"dram__bytes_read.sum.per_second", Model::kDramRead, CUPTI_METRIC_TYPE_THROUGHPUT, "byte/second",
     "DRAM bytes read"},
    {"dram__bytes_write.sum.per_second", Model::kDramWrite, CUPTI_METRIC_TYPE_THROUGHPUT, "byte/second",
     "DRAM bytes written"},
    {"pcie__read_bytes.sum.per_second", Model::kPcieRead, CUPTI_METRIC_TYPE_THROUGHPUT, "byte/second",
     "PCIe bytes received"},
    {"pcie__write_bytes.sum.per_second", Model::kPcieWrite, CUPTI_METRIC_TYPE_THROUGHPUT, "byte/second",
     "PCIe bytes sent"},
    {"nvlrx__bytes.sum.per_second", Model::kNvlinkRx, CUPTI_METRIC_TYPE_THROUGHPUT, "byte/second",
     "NVLink bytes received"},
    {"nvltx__bytes.sum.per_second", Model::kNvlinkTx, CUPTI_METRIC_TYPE_THROUGHPUT, "byte/second",
     "NVLink bytes sent"},
};
// The simulator's kernels keep half the SMs' warp slots busy while they run.
constexpr double kOccupancyWhileBusy = 0.5;

}  // namespace

const MetricModel* metrics_begin() { return std::begin(kMetrics); }
const MetricModel* metrics_end() { return std::end(kMetrics); }

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

bool listed(const std::string& list, const std::string& item) {
  size_t at = 0;
  while (at <= list.size() && !list.empty()) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    const std::string entry = list.substr(at, comma - at);
    if (entry == "*" || entry == item) return true;
    at = comma + 1;
  }
  return false;
}

const MetricModel* find_metric(const char* name) {
  if (name == nullptr) return nullptr;
  for (const MetricModel& m : kMetrics)
    if (std::strcmp(m.name, name) == 0) return listed(env("SIMGPU_CUPTI_PM_UNSUPPORTED_METRICS"), name) ? nullptr : &m;
  return nullptr;
}


uint64_t clock_ns(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

namespace {

// The "hardware". Kernel time is exact per interval: the driver keeps each
// kernel's interval in the device's shared history, so a sample is the union
// of the kernels that overlap it, however late this thread wakes (samples
// are closed kSettleNs after they end, once the driver has published every
// kernel that started in them). Copies and bytes are counters: read every
// millisecond (or every interval, if longer), what changed since the last
// read is spread evenly over the intervals that read covers. Samples lie on
// the interval's grid. Values are device-wide: every process's work counts.
constexpr uint64_t kSettleNs = 50'000'000;  // a stream worker the machine held back publishes late

uint64_t union_within(std::vector<std::pair<int64_t, int64_t>>& intervals, int64_t from, int64_t to) {
  std::vector<std::pair<int64_t, int64_t>> clipped;
  for (const auto& [start, end] : intervals)
    if (end > from && start < to) clipped.emplace_back(std::max(start, from), std::min(end, to));
  std::sort(clipped.begin(), clipped.end());
  uint64_t busy = 0;
  int64_t covered = from;
  for (const auto& [start, end] : clipped) {
    const int64_t s = std::max(start, covered);
    if (end > s) busy += uint64_t(end - s);
    covered = std::max(covered, end);
  }
  return busy;
}

}  // namespace

void sample_device(CUpti_PmSampling_Object* object) {
  simgpu::DeviceStateFile* state = object->state;
  simgpu::BusyHistory& history = state->kernel_history;
  const uint64_t interval = object->interval_ns;
  const uint64_t read_every = std::max<uint64_t>(interval, 1'000'000);
  const int64_t realtime_offset = int64_t(clock_ns(CLOCK_REALTIME)) - int64_t(clock_ns(CLOCK_MONOTONIC));
  uint64_t last = clock_ns(CLOCK_MONOTONIC);
  auto read = [&](double* counters) {
    counters[0] = double(state->copies.busy_until(int64_t(clock_ns(CLOCK_MONOTONIC))));
    counters[1] = double(state->h2d_bytes.load());
    counters[2] = double(state->d2h_bytes.load());
    counters[3] = double(state->p2p_bytes.load());
  };
  double previous[4];
  read(previous);
  // From the oldest kept: a kernel that started before sampling did may
  // still be running (the ones that ended are pruned below).
  const uint64_t published = history.next.load();
  uint64_t seen = published > simgpu::kBusyHistory ? published - simgpu::kBusyHistory : 0;
  std::vector<std::pair<int64_t, int64_t>> kernels;  // intervals that may still overlap an open sample
  std::deque<RawSample> settling;                    // ended, kernel time not counted yet
  uint64_t sample_start = last;
  double accumulated[4] = {};
  auto push = [&](RawSample sample) {
    sample.kernel_busy_ns = union_within(kernels, int64_t(sample.start_ns), int64_t(sample.end_ns));
    sample.start_ns = uint64_t(int64_t(sample.start_ns) + realtime_offset);
    sample.end_ns = uint64_t(int64_t(sample.end_ns) + realtime_offset);
    if (object->buffer.size() < object->capacity) {
      object->buffer.push_back(sample);
    } else if (object->append == CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST) {
      object->buffer.pop_front();
      object->buffer.push_back(sample);
    } else {
      object->overflow = true;
    }
  };
  std::unique_lock lock(object->mutex);
  while (true) {
    const bool stopping = object->stopping;
    if (!stopping) object->wake.wait_for(lock, std::chrono::nanoseconds(read_every));
    const uint64_t now = clock_ns(CLOCK_MONOTONIC);
    // New kernel intervals, up to the first one still being written.
    const uint64_t next = history.next.load();
    if (next - seen > simgpu::kBusyHistory) seen = next - simgpu::kBusyHistory;
    for (; seen < next; ++seen) {
      const auto& entry = history.entries[seen % simgpu::kBusyHistory];
      const int64_t start = entry.start_ns.load(), end = entry.end_ns.load();
      if (end < start) break;  // being written: next time
      kernels.emplace_back(start, end);
    }
    double current[4];
    read(current);
    const double span = double(now - last);
    uint64_t at = last;
    while (span > 0 && at < now) {
      const uint64_t sample_end = sample_start + interval;
      const uint64_t upto = std::min(now, sample_end);
      const double share = double(upto - at) / span;
      for (int i = 0; i < 4; ++i) accumulated[i] += (current[i] - previous[i]) * share;
      at = upto;
      if (upto == sample_end) {
        settling.push_back(RawSample{sample_start, sample_end, 0, uint64_t(accumulated[0] + 0.5),
                                     uint64_t(accumulated[1] + 0.5), uint64_t(accumulated[2] + 0.5),
                                     uint64_t(accumulated[3] + 0.5)});
        sample_start = sample_end;
        std::memset(accumulated, 0, sizeof accumulated);
      }
    }
    std::memcpy(previous, current, sizeof previous);
    last = now;
    while (!settling.empty() && (stopping || settling.front().end_ns + kSettleNs <= now)) {
      push(settling.front());
      settling.pop_front();
    }
    // Intervals that ended before every open sample began are done with.
    const int64_t oldest_open = int64_t(settling.empty() ? sample_start : settling.front().start_ns);
    kernels.erase(std::remove_if(kernels.begin(), kernels.end(),
                                 [&](const auto& k) { return k.second <= oldest_open; }),
                  kernels.end());
    if (stopping) return;
  }
}

double evaluate(const MetricModel& metric, const RawSample& s) {
  const double duration = s.end_ns > s.start_ns ? double(s.end_ns - s.start_ns) : 1.0;
  const double per_second = 1e9 / duration;
  switch (metric.model) {
    case Model::kKernelShare: return std::min(100.0, 100.0 * double(s.kernel_busy_ns) / duration);
    case Model::kOccupancy: return std::min(100.0, 100.0 * kOccupancyWhileBusy * double(s.kernel_busy_ns) / duration);
    case Model::kTensor: return 0.0;
    case Model::kDramRead: return double(s.d2h_bytes + s.p2p_bytes) * per_second;
    case Model::kDramWrite: return double(s.h2d_bytes) * per_second;
    case Model::kPcieRead: return double(s.h2d_bytes) * per_second;
    case Model::kPcieWrite: return double(s.d2h_bytes) * per_second;
    case Model::kNvlinkRx: return 0.0;
    case Model::kNvlinkTx: return double(s.p2p_bytes) * per_second;
  }
  return 0.0;
}

void stop_sampler(CUpti_PmSampling_Object* object) {
  std::thread sampler;
  {
    std::lock_guard lock(object->mutex);
    if (!object->started) return;
    object->stopping = true;
    object->started = false;
    sampler = std::move(object->sampler);
  }
  object->wake.notify_all();
  if (sampler.joinable()) sampler.join();
}

}  // namespace simgpu_pm
