// The NCCL call loop the collective-overhead benchmark times: ncclAllReduce
// on one communicator, linked against libnccl.so.2 as programs are (under
// the shim, the call reaches its exported wrapper first). Which library -
// the null one or the simulator - is decided by LD_LIBRARY_PATH; the bench
// uses the null one, so the figure is the shim's own cost per call.
#include <benchmark/benchmark.h>
#include <nccl.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>

namespace {

ncclComm_t open_comm() {
  ncclUniqueId id;
  ncclComm_t comm = nullptr;
  if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess) {
    std::fprintf(stderr, "nccl_call_loop: no communicator\n");
    std::exit(2);
  }
  return comm;
}

// A pause first, as in the launch loop: the shim's ring must not be full
// when the timed loop starts.
void BM_AllReduce(benchmark::State& state) {
  static ncclComm_t comm = open_comm();
  timespec pause{0, 100'000'000};
  nanosleep(&pause, nullptr);
  static float buffer[256];
  for (auto _ : state) benchmark::DoNotOptimize(ncclAllReduce(buffer, buffer, 256, ncclFloat32, ncclSum, comm, nullptr));
}
BENCHMARK(BM_AllReduce)->Iterations(40000);

// A grouped send/receive pair: three hooked calls and a group record.
void BM_GroupedSendRecv(benchmark::State& state) {
  static ncclComm_t comm = open_comm();
  timespec pause{0, 100'000'000};
  nanosleep(&pause, nullptr);
  static float buffer[256];
  for (auto _ : state) {
    ncclGroupStart();
    ncclSend(buffer, 256, ncclFloat32, 0, comm, nullptr);
    ncclRecv(buffer, 256, ncclFloat32, 0, comm, nullptr);
    benchmark::DoNotOptimize(ncclGroupEnd());
  }
}
BENCHMARK(BM_GroupedSendRecv)->Iterations(20000);

}  // namespace

BENCHMARK_MAIN();
