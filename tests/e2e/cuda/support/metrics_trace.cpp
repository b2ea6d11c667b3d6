#include "tests/e2e/cuda/support/metrics_trace.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "formats/reader.h"

namespace proflaunch::e2e {
namespace {

using format::RecordKind;

// Records are kept with their section until the end: which section is the
// sampler's is known from its ProcessInfo, wherever that lies in the file.
class Collector : public format::RecordVisitor {
 public:
  void on_record(const format::RecordView& r) override {
    switch (r.record_kind()) {
      case RecordKind::kProcessInfo:
        if ((r.as<format::ProcessInfoRecord>().flags & format::kProcessDeviceSampler) != 0)
          out.sampler_section = r.section_id;
        else
          out.program_section = r.section_id;
        break;
      case RecordKind::kStringDef:
        strings_[{r.section_id, r.as<format::StringDefRecord>().id}] = std::string(r.tail<format::StringDefRecord>());
        break;
      case RecordKind::kDeviceInfo:
        devices_.emplace_back(r.section_id, r.as<format::DeviceInfoRecord>());
        break;
      case RecordKind::kGpuMetricDef:
        defs_.emplace_back(r.section_id, r.as<format::GpuMetricDefRecord>());
        break;
      case RecordKind::kGpuMetricSample: {
        const auto s = r.as<format::GpuMetricSampleRecord>();
        samples_[{r.section_id, s.metric}].push_back({s.time_ns, s.value});
        break;
      }
      case RecordKind::kGpuActivity: {
        const auto a = r.as<format::GpuActivityRecord>();
        out.activity.push_back(a);
        if (a.kind == uint8_t(format::GpuActivityKind::kKernel)) out.kernels.emplace_back(a.start_ns, a.end_ns);
        break;
      }
      case RecordKind::kGpuTimingInfo:
        out.timing_info.push_back(r.as<format::GpuTimingInfoRecord>());
        break;
      default:
        break;
    }
  }

  void finish(MetricsOf of) {
    const auto chosen = [&](uint64_t section) {
      return (section == out.sampler_section) == (of == MetricsOf::kSampler);
    };
    for (const auto& [section, device] : devices_) {
      if (section == out.sampler_section)
        out.sampler_devices[device.device] = device;
      else
        out.program_devices.push_back(device);
    }
    for (const auto& [section, def] : defs_)
      if (chosen(section))
        out.defs[def.metric] = {def, strings_[{section, def.name_string}], strings_[{section, def.unit_string}],
                                def.unsupported_reason_string ? strings_[{section, def.unsupported_reason_string}]
                                                              : ""};
    for (auto& [key, list] : samples_) {
      if (chosen(key.first))
        out.samples[key.second] = std::move(list);
      else
        out.other_samples += list.size();
    }
    std::sort(out.kernels.begin(), out.kernels.end());
  }

  MetricsTrace out;

 private:
  std::map<std::pair<uint64_t, uint32_t>, std::string> strings_;
  std::vector<std::pair<uint64_t, format::DeviceInfoRecord>> devices_;
  std::vector<std::pair<uint64_t, format::GpuMetricDefRecord>> defs_;
  std::map<std::pair<uint64_t, uint32_t>, std::vector<MetricsTrace::Sample>> samples_;
};

}  // namespace

const MetricsTrace::Def* MetricsTrace::def(const std::string& name, int32_t device) const {
  for (const auto& [id, d] : defs)
    if (d.name == name && (device < 0 || d.record.device == device)) return &d;
  return nullptr;
}

std::vector<MetricsTrace::Sample> MetricsTrace::of(const std::string& name, int32_t device) const {
  const Def* d = def(name, device);
  if (d == nullptr) return {};
  auto found = samples.find(d->record.metric);
  return found == samples.end() ? std::vector<Sample>{} : found->second;
}

uint64_t MetricsTrace::sample_count() const {
  uint64_t n = 0;
  for (const auto& [id, list] : samples) n += list.size();
  return n;
}

uint64_t MetricsTrace::busy_ns(uint64_t from, uint64_t to) const {
  uint64_t busy = 0, covered_to = from;
  for (const auto& [start, end] : kernels) {
    const uint64_t s = std::max(start, covered_to), e = std::min(end, to);
    if (e > s) busy += e - s;
    covered_to = std::max(covered_to, std::min(end, to));
  }
  return busy;
}

bool MetricsTrace::inside_kernel(uint64_t ns, uint64_t margin_ns) const {
  for (const auto& [start, end] : kernels)
    if (ns >= start + margin_ns && ns + margin_ns <= end) return true;
  return false;
}

bool MetricsTrace::far_from_kernels(uint64_t ns, uint64_t margin_ns) const {
  for (const auto& [start, end] : kernels)
    if (ns + margin_ns >= start && ns <= end + margin_ns) return false;
  return true;
}

MetricsTrace read_metrics_trace(const std::string& path, MetricsOf of) {
  std::string error;
  auto reader = format::TraceReader::open_file(path, &error);
  EXPECT_TRUE(reader) << error;
  Collector collector;
  if (!reader) return collector.out;
  reader->read(collector);
  collector.finish(of);
  return std::move(collector.out);
}

Env metrics_machine(const TempDir& dir, const char* library_dir, Env more) {
  Env env = {{"LD_LIBRARY_PATH", build_path("SIMGPU_LIBRARY_PATH") + ":" + build_path(library_dir)},
             {"SIMGPU_STATE_DIR", dir / "devices"},
             {"SIMGPU_KERNEL_COSTS", "*=10ms"}};
  env.insert(env.end(), more.begin(), more.end());
  return env;
}

std::vector<std::string> load_program(const char* program, std::vector<std::string> args) {
  std::vector<std::string> command = {build_path(program)};
  command.insert(command.end(), args.begin(), args.end());
  return command;
}

}  // namespace proflaunch::e2e
