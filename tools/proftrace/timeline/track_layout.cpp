#include "tools/proftrace/timeline/track_layout.h"

#include <algorithm>
#include <set>

#include "tools/proftrace/demangle.h"
#include "tools/proftrace/record_text.h"

namespace proflaunch::tools::timeline {

using namespace proflaunch::format;

namespace {

// Sort order of GPU processes: after every traced process.
constexpr int64_t kGpuSortIndexBase = 1'000'000;

std::string device_identity(const SectionModel* model, int32_t device) {
  if (model != nullptr) {
    auto found = model->devices.find(device);
    if (found != model->devices.end()) {
      const auto& uuid = found->second.uuid;
      if (std::any_of(std::begin(uuid), std::end(uuid), [](uint8_t b) { return b != 0; })) {
        std::string text = "uuid:";
        for (uint8_t b : uuid) text += hex(b);
        return text;
      }
    }
  }
  return "ordinal:" + std::to_string(device);
}

std::string process_display_name(const SectionModel& section) {
  std::string name;
  if (section.process && section.process->rank >= 0)
    name = "[rank " + std::to_string(section.process->rank) + "] ";
  std::string command = section.command_line();
  if (command.empty() && section.process) command = std::string(section.string(section.process->executable_string));
  if (command.empty()) command = "process";
  // Long command lines make the track header unreadable; args carry the rest.
  constexpr size_t kMaxNameBytes = 160;
  if (command.size() > kMaxNameBytes) command = command.substr(0, kMaxNameBytes) + "...";
  return name + command;
}

}  // namespace

const SectionContext::ApiLabel& SectionContext::api_label(uint16_t api) {
  auto found = api_labels.find(api);
  if (found != api_labels.end()) return found->second;
  const std::string name = model != nullptr ? model->api_name(api) : "api#" + std::to_string(api);
  std::string_view category = "api";
  if (model != nullptr) {
    auto def = model->apis.find(api);
    if (def != model->apis.end()) {
      switch (static_cast<ApiDomain>(def->second.domain)) {
        // Kineto's names, for HIP's runtime too (the PyTorch profiler on
        // ROCm files hip* calls under cuda_runtime).
        case ApiDomain::kDriver: category = "cuda_driver"; break;
        case ApiDomain::kRuntime: category = "cuda_runtime"; break;
        case ApiDomain::kCollective: category = "collective"; break;
        case ApiDomain::kAnnotation: category = "annotation"; break;
        case ApiDomain::kOsRuntime: category = "os_runtime"; break;
        case ApiDomain::kOther: break;
      }
    }
  }
  return api_labels.emplace(api, ApiLabel{strings->intern(name), strings->intern(category)}).first->second;
}

Str SectionContext::kernel_name(uint64_t handle, uint64_t at_ns) {
  if (kernel_name_cache.empty()) kernel_name_cache.resize(size_t{1} << kKernelNameCacheBits);
  KernelNameCacheEntry& slot = kernel_name_cache[(handle * 0x9E3779B97F4A7C15ull) >> (64 - kKernelNameCacheBits)];
  if (slot.names == nullptr || slot.handle != handle) {
    const std::vector<FunctionDefRecord>* versions = nullptr;
    if (model != nullptr) {
      auto found = model->functions.find(handle);
      if (found != model->functions.end()) versions = &found->second;
    }
    if (versions == nullptr || versions->empty()) return strings->intern("unknown kernel");
    auto cached = kernel_names.find(handle);
    if (cached == kernel_names.end()) {
      std::vector<Str> names;
      for (const auto& version : *versions) {
        const std::string_view mangled = model->string(version.name_string);
        names.push_back(strings->intern(mangled.empty() ? "unknown kernel" : demangle(mangled)));
      }
      cached = kernel_names.emplace(handle, std::move(names)).first;
    }
    slot = KernelNameCacheEntry{handle, versions, &cached->second};
  }
  size_t index = 0;
  for (size_t i = 0; i < slot.versions->size(); ++i)
    if ((*slot.versions)[i].since_ns <= at_ns) index = i;
  return (*slot.names)[index];
}

Str SectionContext::host_function_name(uint64_t address, uint64_t at_ns) {
  auto found = host_function_names.find(address);
  if (found != host_function_names.end()) return found->second;
  std::string name = "host function " + hex(address);
  if (model != nullptr && host_functions != nullptr) name = host_functions->name(*model, address, at_ns);
  return host_function_names.emplace(address, strings->intern(name)).first->second;
}

uint64_t SectionContext::stream_id(uint64_t stream, uint32_t launching_tid) {
  if ((stream & kStreamOfBackend) != 0) return stream & ~kStreamOfBackend;  // the backend's (CUPTI's) own id
  const auto key = std::make_pair(stream, stream == kStreamPerThread ? launching_tid : 0u);
  auto found = kineto_stream_ids.find(key);
  if (found != kineto_stream_ids.end()) return found->second;
  auto id = stream_ids.find(stream);
  const uint64_t number = id != stream_ids.end() && stream != kStreamPerThread
                              ? id->second
                              : kSyntheticStreamIdBase + kineto_stream_ids.size() + 1;
  return kineto_stream_ids.emplace(key, number).first->second;
}

Str SectionContext::stream_text(uint64_t stream) {
  auto found = stream_texts.find(stream);
  if (found != stream_texts.end()) return found->second;
  auto id = stream_ids.find(stream);
  const std::string text = id != stream_ids.end() ? std::to_string(id->second) : stream_handle_text(stream);
  return stream_texts.emplace(stream, strings->intern(text)).first->second;
}

TrackLayout::TrackLayout(const TraceModel& model, TimelineSink& out, StringTable& strings,
                         const HostClockOffsets* offsets)
    : model_(model), out_(out), strings_(strings), clocks_(offsets) {
  bool have_base = false;
  for (const auto& [id, section] : model.sections()) {
    if (!section.process) continue;
    const int64_t start = static_cast<int64_t>(section.process->monotonic_ns) + clocks_.offset_ns(section);
    if (!have_base || start < base_ns_) base_ns_ = start;
    have_base = true;
  }

  // Real pids where possible. A pid already claimed by a process on another
  // host (multi-host traces) gets a synthetic one; sections of one host with
  // the same pid (exec) share it.
  std::map<uint32_t, std::string> pid_owner_host;
  uint32_t order = 0;
  for (const SectionModel* section : model.ordered()) {
    auto context = std::make_unique<SectionContext>();
    context->strings = &strings_;
    context->host_functions = &host_functions_;
    context->model = section;
    context->offset_ns = clocks_.offset_ns(*section);
    context->display_order = order++;
    const uint32_t pid = section->pid();
    const std::string host = section->host();
    if (pid == 0 || pid >= kLinuxPidLimit) {
      context->pid = next_remapped_pid_++;
    } else {
      auto [owner, inserted] = pid_owner_host.emplace(pid, host);
      context->pid = (inserted || owner->second == host) ? pid : next_remapped_pid_++;
    }
    sections_.emplace(section->section_id, std::move(context));
  }
}

SectionContext& TrackLayout::section(uint64_t section_id) {
  auto found = sections_.find(section_id);
  if (found != sections_.end()) return *found->second;
  // Events of a section whose definitions were lost.
  auto context = std::make_unique<SectionContext>();
  context->strings = &strings_;
  context->host_functions = &host_functions_;
  context->model = model_.find(section_id);
  context->pid = next_remapped_pid_++;
  context->display_order = static_cast<uint32_t>(sections_.size());
  SectionContext& result = *context;
  sections_.emplace(section_id, std::move(context));
  declare_process(result.pid, "unknown process (section " + hex(section_id) + ", definitions lost)",
                  result.display_order);
  return result;
}

void TrackLayout::declare_process(uint32_t pid, const std::string& name, int64_t sort_index) {
  out_.process(ProcessTrack{pid, name.empty() ? std::string_view("unnamed") : std::string_view(name), sort_index});
}

void TrackLayout::declare_track(uint32_t pid, uint32_t tid, const std::string& name, int64_t sort_index,
                                ThreadKind kind) {
  out_.thread(ThreadTrack{pid, tid, name.empty() ? std::string_view("unnamed") : std::string_view(name), sort_index,
                          kind});
}

void TrackLayout::write_host_metadata() {
  // One name per JSON pid: with exec, several sections share a pid and the
  // latest image names it.
  std::map<uint32_t, const SectionContext*> by_pid;
  for (const SectionModel* section : model_.ordered()) {
    const SectionContext& context = *sections_.at(section->section_id);
    auto [it, inserted] = by_pid.emplace(context.pid, &context);
    if (!inserted && section->process && it->second->model->process &&
        section->process->monotonic_ns > it->second->model->process->monotonic_ns)
      it->second = &context;
  }
  std::set<uint32_t> written;
  for (const SectionModel* section : model_.ordered()) {
    if (section->device_sampler()) continue;  // its samples go to the GPU processes
    const SectionContext& context = *sections_.at(section->section_id);
    if (written.insert(context.pid).second) {
      const SectionContext& namer = *by_pid.at(context.pid);
      std::string name = process_display_name(*namer.model);
      if (context.pid != section->pid() && section->pid() != 0)
        name += " (pid " + std::to_string(section->pid()) + " on " + section->host() + ")";
      declare_process(context.pid, name, context.display_order);
    }
    for (const auto& [tid, versions] : section->threads) {
      if (versions.empty() || tid == 0) continue;
      // The main thread first, then by tid.
      declare_track(context.pid, tid, std::string(section->string(versions.back().name_string)),
                    tid == section->pid() ? -1 : 0, ThreadKind::kThread);
    }
  }
}

uint32_t TrackLayout::nvtx_track(SectionContext& section, uint32_t tid, uint64_t domain) {
  const uint64_t section_id = section.model != nullptr ? section.model->section_id : section.pid;
  auto [it, inserted] = nvtx_tracks_.try_emplace({section_id, tid, domain}, 0);
  if (!inserted) return it->second;
  it->second = next_nvtx_tid_++;
  std::string domain_name = section.model != nullptr ? std::string(section.model->nvtx_domain_name(domain)) : "";
  if (domain_name.empty()) domain_name = domain == 0 ? "default" : "domain " + std::to_string(domain);
  std::string thread = section.model != nullptr ? std::string(section.model->thread_name(tid)) : "";
  thread += (thread.empty() ? "" : " ") + std::string("(") + std::to_string(tid) + ")";
  // Right after the thread's own track (sort index 0; the main thread's is -1).
  declare_track(section.pid, it->second, "NVTX " + domain_name + ": " + thread, 1);
  return it->second;
}

uint32_t TrackLayout::steps_track(SectionContext& section, uint32_t tid) {
  if (steps_tid_ != 0) return steps_tid_;
  steps_tid_ = next_nvtx_tid_++;
  std::string thread = section.model != nullptr ? std::string(section.model->thread_name(tid)) : "";
  thread += (thread.empty() ? "" : " ") + std::string("(") + std::to_string(tid) + ")";
  // Right after the thread's own track, as its NVTX tracks.
  declare_track(section.pid, steps_tid_, "Steps: " + thread, 1);
  return steps_tid_;
}

uint32_t TrackLayout::capture_track(SectionContext& section) {
  const uint64_t section_id = section.model != nullptr ? section.model->section_id : section.pid;
  auto [it, inserted] = capture_tracks_.try_emplace(section_id, 0);
  if (!inserted) return it->second;
  it->second = next_nvtx_tid_++;
  declare_track(section.pid, it->second, "Capture windows", -2);  // above the main thread (-1)
  return it->second;
}

GpuPlacement TrackLayout::nvtx_gpu_track(SectionContext& section, int32_t device, uint32_t tid) {
  return thread_track_in_gpu(nvtx_gpu_tracks_, "NVTX GPU ranges: ", section, device, tid);
}

GpuPlacement TrackLayout::sync_track(SectionContext& section, int32_t device, uint32_t tid) {
  return thread_track_in_gpu(sync_tracks_, "CUDA syncs: ", section, device, tid);
}

GpuPlacement TrackLayout::thread_track_in_gpu(std::map<std::tuple<int32_t, uint64_t, uint32_t>, GpuPlacement>& tracks,
                                              const char* prefix, SectionContext& section, int32_t device,
                                              uint32_t tid) {
  const uint64_t section_id = section.model != nullptr ? section.model->section_id : section.pid;
  auto [it, inserted] = tracks.try_emplace({device, section_id, tid}, GpuPlacement{});
  if (!inserted) return it->second;
  GpuProcess& gpu = gpu_process(section, device);
  it->second.pid = gpu.pid;
  it->second.tid = gpu.next_tid++;
  std::string thread = section.model != nullptr ? std::string(section.model->thread_name(tid)) : "";
  // Above the streams of their process.
  declare_track(gpu.pid, it->second.tid,
                prefix + thread + (thread.empty() ? "" : " ") + "(" + std::to_string(tid) + ", pid " +
                    std::to_string(section.model != nullptr ? section.model->pid() : section.pid) + ")",
                static_cast<int64_t>(section.display_order) * 10000 - 1);
  return it->second;
}

GpuProcess& TrackLayout::gpu_process(SectionContext& section, int32_t device) {
  auto cached = section.gpu_by_device.find(device);
  if (cached != section.gpu_by_device.end()) return *cached->second;

  const std::string host = section.model != nullptr ? section.model->host() : std::string();
  auto key = std::make_pair(host, device_identity(section.model, device));
  auto found = gpu_processes_.find(key);
  if (found == gpu_processes_.end()) {
    auto gpu = std::make_unique<GpuProcess>();
    gpu->pid = kGpuPidBase + static_cast<uint32_t>(gpu_processes_.size());
    std::string name = device_label(device);
    // A device only the launcher's sampler saw (no traced process used it):
    // its number is the sampling library's, not any process's ordinal.
    if (section.model != nullptr && section.model->device_sampler()) {
      auto info = section.model->devices.find(device);
      const bool amd = info != section.model->devices.end() && info->second.vendor == uint8_t(format::Vendor::kAmd);
      name = std::string("GPU (") + (amd ? "ROCm SMI " : "NVML ") + std::to_string(device) + ", used by no traced process)";
    }
    if (section.model != nullptr && !format::is_amd_device(device) && !section.model->device_sampler()) {
      // A name the program gave the device (nvtxNameCudaDeviceA, nvtxNameCuDeviceA).
      const std::string_view named =
          section.model->nvtx_name(NvtxNameKind::kCudaDevice, 0, static_cast<uint64_t>(device));
      if (!named.empty()) name += " \"" + std::string(named) + "\"";
    }
    if (section.model != nullptr) {
      auto info = section.model->devices.find(device);
      if (info != section.model->devices.end()) {
        const std::string_view device_name = section.model->string(info->second.name_string);
        if (!device_name.empty()) name += " (" + std::string(device_name) + ")";
      }
    }
    if (!host.empty()) name += " on " + host;
    gpu->name = name;
    declare_process(gpu->pid, gpu->name, kGpuSortIndexBase + static_cast<int64_t>(gpu_processes_.size()));
    found = gpu_processes_.emplace(key, std::move(gpu)).first;
  }
  section.gpu_by_device[device] = found->second.get();
  return *found->second;
}

void TrackLayout::note_stream_id(SectionContext& section, uint64_t handle, uint64_t id) {
  if (id == 0) return;
  section.stream_ids[handle] = id;
  section.stream_texts.erase(handle);
}

std::string TrackLayout::stream_track_name(SectionContext& section, uint64_t stream,
                                           uint32_t launching_tid) {
  const std::string process =
      " (pid " + std::to_string(section.model != nullptr ? section.model->pid() : section.pid) + ")";
  // A name the program gave the stream (nvtxNameCudaStreamA, nvtxNameCuStreamA).
  if (section.model != nullptr) {
    const std::string_view named = section.model->nvtx_name(NvtxNameKind::kCudaStream, 0, stream);
    if (!named.empty()) return std::string(named) + process;
  }
  if (stream == kStreamLegacy) return "Default stream" + process;
  if (stream == kStreamPerThread)
    return "Per-thread default stream, tid " + std::to_string(launching_tid) + process;
  if ((stream & kStreamOfBackend) != 0)
    return "CUPTI stream " + std::to_string(stream & ~kStreamOfBackend) + " (no hooked call used it)" + process;
  auto id = section.stream_ids.find(stream);
  if (id != section.stream_ids.end()) return "Stream " + std::to_string(id->second) + process;
  auto [number, inserted] = section.stream_numbers.emplace(stream, section.stream_numbers.size() + 1);
  return "Stream #" + std::to_string(number->second) + process;
}

GpuPlacement TrackLayout::place_gpu_work(SectionContext& section, int32_t device, uint64_t stream,
                                         uint32_t launching_tid, int64_t start_ns, int64_t end_ns,
                                         bool graph_replays, bool start_is_bound) {
  GpuProcess& gpu = gpu_process(section, device);
  const uint32_t thread_key = stream == kStreamPerThread ? launching_tid : 0;
  const uint64_t section_key = section.model != nullptr ? section.model->section_id : uint64_t{section.pid};
  StreamLanes& lanes = gpu.streams[std::make_tuple(section_key, stream, thread_key, graph_replays)];
  const LanePlacement placement = lanes.place(start_ns, end_ns, start_is_bound);
  uint32_t tid;
  if (placement.lane < lanes.count()) {
    tid = lanes.tid(placement.lane);
  } else {
    tid = gpu.next_tid++;
    std::string name = stream_track_name(section, stream, launching_tid);
    if (graph_replays) name += " graph replays";
    if (placement.lane > 0) name += " overlapping work " + std::to_string(placement.lane);
    // Grouped by traced process, default streams first, lanes after their stream.
    int64_t within = 2 + static_cast<int64_t>(tid);
    if (stream == kStreamLegacy) within = 0;
    else if (stream == kStreamPerThread) within = 1;
    declare_track(gpu.pid, tid, name,
                  static_cast<int64_t>(section.display_order) * 10000 + std::min<int64_t>(within, 9999));
  }
  lanes.commit(placement, tid);
  return GpuPlacement{gpu.pid, tid, placement.start_ns, placement.end_ns, placement.adjusted_ns};
}

}  // namespace proflaunch::tools::timeline
