// proflaunch-synthetic-memory-trace: writes a trace of N allocation events
// (MemoryOperation records) that looks like a training job's allocator
// traffic, for the memory model's benchmark and large-trace tests.
//   proflaunch-synthetic-memory-trace -n 10000000 -o alloc.trace
//
// Per process: about --live blocks held at any time, sizes log-uniform from
// 512 B to 64 MiB, cudaMalloc/cudaFree (80 %) and cudaMallocAsync/
// cudaFreeAsync on a pool (20 %); host threads take turns in bursts; a spike
// of large blocks every 1 M events makes peaks; every 50 000th allocation
// fails (out of memory). Deterministic: the same options write the same file.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "formats/trace_builder.h"

using namespace proflaunch::format;

namespace {

struct Settings {
  uint64_t events = 1'000'000;
  std::string output;
  uint32_t processes = 1;
  uint32_t threads = 2;
  uint32_t live = 2000;
  uint64_t spacing_ns = 2000;
};

struct Block {
  uint64_t address;
  uint64_t bytes;
  bool pool;
};

struct Process {
  uint64_t section = 0;
  uint32_t pid = 0;
  uint16_t malloc_api = 0, free_api = 0, malloc_async_api = 0, free_async_api = 0;
  uint64_t now_ns = 0;
  uint64_t next_address = 0x7f0000000000;
  uint64_t next_correlation = 1;
  uint64_t pool_live_bytes = 0;
  uint64_t pool_reserved_bytes = 0;
  uint64_t allocations = 0;
  std::vector<Block> live;
  uint64_t random = 0x9E3779B97F4A7C15ull;

  uint64_t next_random() {  // xorshift64*
    random ^= random >> 12;
    random ^= random << 25;
    random ^= random >> 27;
    return random * 0x2545F4914F6CDD1Dull;
  }
};

constexpr uint64_t kPool = 0x9000;
constexpr uint64_t kStream = 0x5001;

MemoryOperationRecord operation(Process& p, uint16_t api, AllocationKind kind, MemoryAction action) {
  MemoryOperationRecord r{};
  r.span.begin_ns = p.now_ns;
  p.now_ns += 1000;
  r.span.end_ns = p.now_ns;
  r.span.correlation_id = p.next_correlation++;
  r.span.api = api;
  r.span.flags = kApiViaRuntime;
  r.kind = static_cast<uint8_t>(kind);
  r.action = static_cast<uint8_t>(action);
  if (kind == AllocationKind::kPool) {
    r.stream = kStream;
    r.handle = kPool;
    r.span.flags |= kApiAsync;
  }
  return r;
}

MemoryOperationRecord allocate(Process& p, uint64_t bytes, bool pool, bool fail) {
  MemoryOperationRecord r = operation(p, pool ? p.malloc_async_api : p.malloc_api,
                                      pool ? AllocationKind::kPool : AllocationKind::kDevice, MemoryAction::kAcquire);
  r.bytes = bytes;
  if (fail) {
    r.span.result = 2;  // CUDA_ERROR_OUT_OF_MEMORY
  } else {
    r.address = p.next_address;
    p.next_address += (bytes + 511) / 512 * 512;
    p.live.push_back(Block{r.address, bytes, pool});
    if (pool) {
      p.pool_live_bytes += bytes;
      p.pool_reserved_bytes = std::max(p.pool_reserved_bytes, p.pool_live_bytes);
    }
  }
  if (pool) r.pool_reserved_bytes = p.pool_reserved_bytes;
  return r;
}

MemoryOperationRecord release(Process& p, size_t index) {
  const Block block = p.live[index];
  p.live[index] = p.live.back();
  p.live.pop_back();
  MemoryOperationRecord r = operation(p, block.pool ? p.free_async_api : p.free_api,
                                      block.pool ? AllocationKind::kPool : AllocationKind::kDevice,
                                      MemoryAction::kRelease);
  r.address = block.address;
  if (block.pool) {
    p.pool_live_bytes -= block.bytes;
    r.pool_reserved_bytes = p.pool_reserved_bytes;
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"Writes a synthetic proflaunch trace of N allocation and free events"};
  app.add_option("-n,--events", s.events, "memory event records to write")->capture_default_str();
  app.add_option("-o,--output", s.output, "trace file to write")->required();
  app.add_option("--processes", s.processes, "traced processes (sections)")->capture_default_str()->check(CLI::Range(1u, 1024u));
  app.add_option("--threads", s.threads, "host threads per process")->capture_default_str()->check(CLI::Range(1u, 1024u));
  app.add_option("--live", s.live, "blocks held at a time, about")->capture_default_str()->check(CLI::Range(1u, 10'000'000u));
  app.add_option("--spacing-ns", s.spacing_ns, "time between events of a process")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::FILE* out = std::fopen(s.output.c_str(), "wb");
  if (out == nullptr) {
    std::fprintf(stderr, "%s: %s\n", s.output.c_str(), std::strerror(errno));
    return 1;
  }
  TraceBuilder trace(TraceBuilder::Options{}, out);
  std::vector<Process> processes(s.processes);
  for (uint32_t i = 0; i < s.processes; ++i) {
    Process& p = processes[i];
    p.section = 0x3E3000000000000ull + i;
    p.pid = 2000 + 100 * i;
    p.now_ns = 1'000'000'000;
    p.random += i;
    ProcessSpec spec;
    spec.pid = p.pid;
    spec.argv = {"python", "train.py", "--rank", std::to_string(i)};
    spec.monotonic_ns = p.now_ns;
    trace.process(p.section, spec);
    p.malloc_api = trace.api(p.section, "cudaMalloc", ApiDomain::kRuntime);
    p.free_api = trace.api(p.section, "cudaFree", ApiDomain::kRuntime);
    p.malloc_async_api = trace.api(p.section, "cudaMallocAsync", ApiDomain::kRuntime);
    p.free_async_api = trace.api(p.section, "cudaFreeAsync", ApiDomain::kRuntime);
    for (uint32_t t = 0; t < s.threads; ++t) trace.thread(p.section, p.pid + t, t == 0 ? "python" : "pt_worker");
    DeviceSpec device;
    device.ordinal = 0;
    trace.device(p.section, device);
  }
  trace.flush();

  uint64_t written = 0;
  for (uint64_t i = 0; written < s.events; ++i) {
    Process& p = processes[i % s.processes];
    const uint64_t step = i / s.processes;
    const uint32_t tid = p.pid + static_cast<uint32_t>((step / 1000) % s.threads);
    p.now_ns += s.spacing_ns - 1000;
    MemoryOperationRecord record;
    const bool spike = step % 1'000'000 >= 500'000 && step % 1'000'000 < 500'040;
    if (spike && step % 2 == 0) {
      record = allocate(p, 256ull << 20, false, false);
    } else if (!p.live.empty() && (p.live.size() >= s.live || p.next_random() % 2 == 0)) {
      record = release(p, p.next_random() % p.live.size());
    } else {
      const uint64_t bytes = (uint64_t{512} << (p.next_random() % 18)) + p.next_random() % 512;
      const bool fail = ++p.allocations % 50'000 == 0;
      record = allocate(p, fail ? (1ull << 40) : bytes, p.next_random() % 5 == 0, fail);
    }
    trace.event(p.section, tid, record);
    ++written;
  }
  for (auto& p : processes) trace.section_end(p.section, p.now_ns, written, 0);
  trace.flush();
  const bool ok = trace.ok() && std::fclose(out) == 0;
  if (!ok) {
    std::fprintf(stderr, "%s: writing failed\n", s.output.c_str());
    return 1;
  }
  std::fprintf(stderr, "wrote %s: %llu memory event records\n", s.output.c_str(),
               static_cast<unsigned long long>(written));
  return 0;
}
