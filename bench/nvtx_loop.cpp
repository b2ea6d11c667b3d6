// The NVTX benchmark (figure n): one range (nvtxRangePushA + nvtxRangePop)
// per iteration, with the toolkit's nvtx3 headers. Untraced, NVTX has no
// tool and each call returns at once; traced, the shim is the NVTX tool
// (NVTX_INJECTION64_PATH) and records both calls.
#include <benchmark/benchmark.h>
#include <nvtx3/nvToolsExt.h>

#include <time.h>

namespace {

void BM_NvtxRange(benchmark::State& state) {
  timespec pause{0, 100'000'000};  // let the shim's rings drain first
  nanosleep(&pause, nullptr);
  for (auto _ : state) {
    nvtxRangePushA("bench range");
    nvtxRangePop();
  }
}
BENCHMARK(BM_NvtxRange)->Iterations(40000);

}  // namespace

BENCHMARK_MAIN();
