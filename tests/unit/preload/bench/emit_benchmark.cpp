// The hot path in isolation: what one recorded event costs the thread that
// records it. Links proflaunch_core directly (no LD_PRELOAD).
//
//   meson test -C build --benchmark --suite preload-bench --verbose
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <unistd.h>
#include <x86intrin.h>

#include <cstring>
#include <vector>

#include "formats/records.h"
#include "preload/process/lifecycle.h"
#include "preload/record/emit.h"
#include "preload/writer/writer.h"

namespace proflaunch {
namespace {

using format::ApiCallRecord;

void BM_ClockMonotonic(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(now_ns());
}
BENCHMARK(BM_ClockMonotonic);

void BM_ClockMonotonicCoarse(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(clock_ns(CLOCK_MONOTONIC_COARSE));
}
BENCHMARK(BM_ClockMonotonicCoarse);

void BM_Rdtsc(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(__rdtsc());
}
BENCHMARK(BM_Rdtsc);

// reserve + zero + header + fields + commit on a ring nobody drains: the
// record write alone. The ring is emptied outside the timed region.
void BM_RingRecordInPlace(benchmark::State& state) {
  constexpr uint64_t kCapacity = uint64_t{64} << 20;
  std::vector<uint8_t> memory(kCapacity);
  ThreadBuffer ring;
  ring.init(memory.data(), kCapacity, 1, pthread_self());
  uint64_t value = 0;
  for (auto _ : state) {
    void* slot = ring.reserve(sizeof(ApiCallRecord));
    if (slot == nullptr) {
      state.PauseTiming();
      ring.drain([](const void*, uint16_t) { return true; });
      state.ResumeTiming();
      slot = ring.reserve(sizeof(ApiCallRecord));
    }
    std::memset(slot, 0, sizeof(ApiCallRecord));
    auto* record = static_cast<ApiCallRecord*>(slot);
    record->header = format::header_for<ApiCallRecord>();
    record->span.begin_ns = value;
    record->span.end_ns = value + 1;
    record->span.correlation_id = value++;
    record->span.api = 1;
    ring.commit();
  }
}
BENCHMARK(BM_RingRecordInPlace);

// Every kBatch records, the timer stops while the writer drains the ring, so
// the loops below measure a warm 8 MiB ring that never overflows (the cost of
// a drop is not what we want to know here).
constexpr uint64_t kBatch = 65536;
void drain_between_batches(benchmark::State& state, uint64_t value) {
  if (value % kBatch != 0) return;
  state.PauseTiming();
  writer_flush_and_wait(FlushGoal::kFlush, 5000);
  state.ResumeTiming();
}

// The interface hooks use: emit<T>() through the thread's TLS buffer.
void BM_EmitApiCall(benchmark::State& state) {
  uint64_t value = 0;
  for (auto _ : state) {
    drain_between_batches(state, value);
    if (auto* record = emit<ApiCallRecord>()) {
      record->span.begin_ns = value;
      record->span.end_ns = value + 1;
      record->span.correlation_id = value++;
      record->span.api = 1;
      commit();
    }
  }
}
BENCHMARK(BM_EmitApiCall);

// What a hook adds around the real call: two timestamps, one record.
void BM_EmitApiCallWithTimestamps(benchmark::State& state) {
  uint64_t value = 0;
  for (auto _ : state) {
    drain_between_batches(state, value);
    ReentrancyGuard guard;
    const uint64_t begin = now_ticks();
    if (auto* record = emit<ApiCallRecord>()) {
      record->span.begin_ns = begin;
      record->span.end_ns = now_ticks();
      record->span.correlation_id = value++;
      record->span.api = 1;
      commit();
    }
  }
}
BENCHMARK(BM_EmitApiCallWithTimestamps);

}  // namespace
}  // namespace proflaunch

int main(int argc, char** argv) {
  char parts_dir[] = "/tmp/proflaunch-bench-XXXXXX";
  if (mkdtemp(parts_dir) == nullptr) return 1;
  proflaunch::Config config;
  std::strcpy(config.parts_dir, parts_dir);
  config.buffer_bytes_per_thread = proflaunch::kDefaultBufferBytes;
  config.flush_interval_ms = 100;
  proflaunch::runtime::start(config);

  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  proflaunch::runtime::finish();
  const std::string cleanup = std::string("rm -rf ") + parts_dir;
  return std::system(cleanup.c_str()) == 0 ? 0 : 1;
}
