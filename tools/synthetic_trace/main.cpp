// proflaunch-synthetic-trace: writes a trace of N event records that looks
// like a training loop (launches, copies, syncs, their GPU activity a little
// later in the file), for benchmarks and large-trace tests.
//   proflaunch-synthetic-trace -n 10000000 -o big.trace
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <string>

#include "formats/trace_builder.h"

using namespace proflaunch::format;

namespace {

struct Settings {
  uint64_t events = 1'000'000;
  std::string output;
  uint32_t processes = 1;
  uint32_t threads = 2;
  uint32_t streams = 4;
  uint32_t kernels = 50;
  uint32_t activity_delay = 64;  // activities trail their launch by 64..128 operations
  bool gpu_timing = true;
};

struct Process {
  uint64_t section;
  uint32_t pid;
  int32_t device;
  uint16_t launch_api, copy_api, sync_api;
  uint64_t next_correlation = 1;
  uint64_t host_ns;
  std::vector<uint64_t> stream_free_ns;
  std::deque<GpuActivityRecord> pending;
};

void define_process(TraceBuilder& trace, Process& p, const Settings& s, uint32_t index) {
  ProcessSpec spec;
  spec.pid = p.pid;
  spec.ppid = 1;
  spec.host = "synthetic-host";
  spec.argv = {"python", "train.py", "--rank", std::to_string(index)};
  spec.rank = static_cast<int32_t>(index);
  spec.world_size = static_cast<int32_t>(s.processes);
  spec.monotonic_ns = p.host_ns;
  trace.process(p.section, spec);
  p.launch_api = trace.api(p.section, "cuLaunchKernel", ApiDomain::kDriver);
  p.copy_api = trace.api(p.section, "cudaMemcpyAsync", ApiDomain::kRuntime);
  p.sync_api = trace.api(p.section, "cudaStreamSynchronize", ApiDomain::kRuntime);
  for (uint32_t k = 0; k < s.kernels; ++k)
  {
    // void at::native::kernel_<k><float>(float*, int): a valid mangled name.
    const std::string name = "kernel_" + std::to_string(k);
    trace.function(p.section, 0x7000 + k,
                   "_ZN2at6native" + std::to_string(name.size()) + name + "IfEEvPT_i");
  }
  for (uint32_t t = 0; t < s.threads; ++t)
    trace.thread(p.section, p.pid + t, t == 0 ? "python" : "pt_autograd_" + std::to_string(t));
  DeviceSpec device;
  device.ordinal = p.device;
  device.uuid[0] = static_cast<uint8_t>(index % 8 + 1);
  trace.device(p.section, device);
  p.stream_free_ns.assign(s.streams, p.host_ns);
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"Writes a synthetic proflaunch trace of N event records"};
  app.add_option("-n,--events", s.events, "event records to write")->capture_default_str();
  app.add_option("-o,--output", s.output, "trace file to write")->required();
  app.add_option("--processes", s.processes, "traced processes (sections)")->capture_default_str()->check(CLI::Range(1u, 1024u));
  app.add_option("--threads", s.threads, "host threads per process")->capture_default_str()->check(CLI::Range(1u, 1024u));
  app.add_option("--streams", s.streams, "streams per process")->capture_default_str()->check(CLI::Range(1u, 1024u));
  app.add_option("--kernels", s.kernels, "distinct kernel names")->capture_default_str()->check(CLI::Range(1u, 100000u));
  app.add_option("--activity-delay", s.activity_delay, "operations between a launch and its GPU activity record")->capture_default_str();
  app.add_flag("!--no-gpu-timing", s.gpu_timing, "write no GpuActivity records");
  CLI11_PARSE(app, argc, argv);

  std::FILE* out = std::fopen(s.output.c_str(), "wb");
  if (out == nullptr) {
    std::fprintf(stderr, "%s: %s\n", s.output.c_str(), std::strerror(errno));
    return 1;
  }
  TraceBuilder trace(TraceBuilder::Options{}, out);
  std::vector<Process> processes(s.processes);
  for (uint32_t i = 0; i < s.processes; ++i) {
    processes[i].section = 0x5EC7000000000000ull + i;
    processes[i].pid = 1000 + 100 * i;
    processes[i].host_ns = 1'000'000'000;
    processes[i].device = static_cast<int32_t>(i % 8);
    define_process(trace, processes[i], s, i);
  }
  trace.flush();

  uint64_t written = 0;
  uint64_t operation = 0;
  while (written < s.events) {
    Process& p = processes[operation % s.processes];
    // Each host thread issues bursts of operations, as a training step does.
    const uint32_t tid = p.pid + static_cast<uint32_t>((operation / s.processes / 256) % s.threads);
    const uint32_t stream_index = static_cast<uint32_t>(operation % s.streams);
    const uint64_t stream = 0x5000 + stream_index;
    const uint64_t id = p.next_correlation++;
    const uint64_t begin = p.host_ns;
    const uint64_t end = begin + 3000;
    p.host_ns = end + 2000;
    const uint64_t gpu_start = std::max(end, p.stream_free_ns[stream_index]);
    uint64_t gpu_end;
    if (operation % 50 == 49) {
      SynchronizeRecord sync{};
      sync.span = ApiSpan{begin, end + 20000, id, 0, p.sync_api, 0};
      sync.stream = stream;
      sync.device = p.device;
      sync.target = static_cast<uint8_t>(SyncTarget::kStream);
      trace.event(p.section, tid, sync);
      p.host_ns = end + 22000;
      ++written;
      ++operation;
      continue;
    }
    GpuActivityRecord activity{};
    activity.correlation_id = id;
    activity.stream = stream;
    activity.device = p.device;
    activity.source = static_cast<uint8_t>(GpuTimingSource::kEvents);
    if (operation % 10 == 9) {
      MemoryCopyRecord copy{};
      copy.span = ApiSpan{begin, end, id, 0, p.copy_api, kApiAsync};
      copy.bytes = 1 << 20;
      copy.stream = stream;
      copy.device = p.device;
      copy.direction = static_cast<uint8_t>(CopyDirection::kHostToDevice);
      copy.src_kind = static_cast<uint8_t>(MemoryKind::kPinnedHost);
      copy.dst_kind = static_cast<uint8_t>(MemoryKind::kDevice);
      copy.peer_device = -1;
      trace.event(p.section, tid, copy);
      gpu_end = gpu_start + 40000;
      activity.kind = static_cast<uint8_t>(GpuActivityKind::kMemoryCopy);
    } else {
      KernelLaunchRecord launch{};
      launch.span = ApiSpan{begin, end, id, 0, p.launch_api, kApiAsync};
      launch.function = 0x7000 + operation % s.kernels;
      launch.stream = stream;
      launch.device = p.device;
      launch.grid = {1024, 1, 1};
      launch.block = {256, 1, 1};
      trace.event(p.section, tid, launch);
      gpu_end = gpu_start + 8000 + operation % 7 * 1000;
      activity.kind = static_cast<uint8_t>(GpuActivityKind::kKernel);
    }
    ++written;
    p.stream_free_ns[stream_index] = gpu_end;
    activity.start_ns = gpu_start;
    activity.end_ns = gpu_end;
    if (s.gpu_timing) p.pending.push_back(activity);
    // The timing backend resolves operations a little behind the launches
    // and writes them in bursts from its own thread.
    if (p.pending.size() >= 2 * s.activity_delay) {
      while (p.pending.size() > s.activity_delay && written < s.events) {
        trace.event(p.section, p.pid + 9999, p.pending.front());
        p.pending.pop_front();
        ++written;
      }
    }
    ++operation;
  }
  for (auto& p : processes) {
    while (!p.pending.empty()) {
      trace.event(p.section, p.pid + 9999, p.pending.front());
      p.pending.pop_front();
    }
    trace.section_end(p.section, p.host_ns, written, 0);
  }
  trace.flush();
  const bool ok = trace.ok() && std::fclose(out) == 0;
  if (!ok) {
    std::fprintf(stderr, "%s: writing failed\n", s.output.c_str());
    return 1;
  }
  std::fprintf(stderr, "wrote %s: %llu event records\n", s.output.c_str(),
               static_cast<unsigned long long>(written));
  return 0;
}
