#include "tools/proftrace/timeline/trace_metadata.h"

#include <algorithm>
#include <set>

#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools::timeline {

using namespace proflaunch::format;

namespace {

bool calls_collectives(const SectionModel& section) {
  // ApiDefs are written on first use: a collective API defined was called.
  return std::any_of(section.apis.begin(), section.apis.end(), [](const auto& entry) {
    return entry.second.domain == static_cast<uint8_t>(ApiDomain::kCollective);
  });
}

std::optional<DistributedInfo> distributed_info(const TraceModel& model) {
  std::set<int32_t> ranks;
  DistributedInfo info;
  for (const auto& [id, section] : model.sections()) {
    info.collectives |= calls_collectives(section);
    if (!section.process || section.process->rank < 0) continue;
    ranks.insert(section.process->rank);
    info.world_size = std::max(info.world_size, section.process->world_size);
  }
  if (ranks.size() != 1) return std::nullopt;
  info.rank = *ranks.begin();
  return info;
}

std::vector<GpuProperties> gpu_properties(const TraceModel& model) {
  bool any_nvidia = false;
  for (const SectionModel* section : model.ordered())
    for (const auto& [device, info] : section->devices) any_nvidia |= !is_amd_device(device);
  std::vector<GpuProperties> devices;
  for (const SectionModel* section : model.ordered()) {
    for (const auto& [device, info] : section->devices) {
      if (is_amd_device(device) == any_nvidia) continue;
      const int32_t ordinal = device_ordinal(device);
      if (ordinal < 0) continue;
      if (devices.size() <= static_cast<size_t>(ordinal)) devices.resize(static_cast<size_t>(ordinal) + 1);
      GpuProperties& properties = devices[static_cast<size_t>(ordinal)];
      if (properties.known) continue;  // the first process (display order) that describes it
      properties.known = true;
      properties.name = std::string(section->string(info.name_string));
      properties.info = info;
    }
  }
  for (size_t i = 0; i < devices.size(); ++i) devices[i].ordinal = static_cast<int32_t>(i);
  return devices;
}

}  // namespace

TraceMetadata trace_metadata(const TraceModel& model) {
  return TraceMetadata{distributed_info(model), gpu_properties(model)};
}

}  // namespace proflaunch::tools::timeline
