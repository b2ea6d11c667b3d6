// One rank of a data-parallel job, as torchrun would start it: reads RANK,
// LOCAL_RANK and WORLD_SIZE, gets the NCCL unique id from rank 0 through a
// file in $RENDEZVOUS_DIR (what torch's TCPStore does over the network),
// and runs --iterations steps of "compute" (a kernel on the rank's stream)
// followed by the collectives named in --ops, checking every result.
//
//   --ops allreduce,allgather,reducescatter,broadcast,sendrecv (default all)
//   --iterations N (3)   --count N elements per rank (4096)
//   --slow-rank R --delay-ms D   rank R sleeps D ms before each iteration's collectives
//   --crash-rank R --crash-after K   rank R dies (SIGSEGV) after K iterations
//
// stdout: "nccl_ranks: rank=R world=N iterations=I ok". A collective that
// failed (a peer died) prints "nccl_ranks: rank R: <call> failed: <error>"
// and exits 3.
#include <nccl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/cuda_check.h"
#include "common/kernels.h"
#include "common/options.h"

namespace {

int env_int(const char* name, int fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::atoi(text) : fallback;
}

ncclUniqueId rendezvous(int rank) {
  const char* dir = std::getenv("RENDEZVOUS_DIR");
  if (dir == nullptr) {
    std::fprintf(stderr, "error: RENDEZVOUS_DIR is not set (run under torchrun_like)\n");
    std::exit(2);
  }
  const std::string path = std::string(dir) + "/nccl_id";
  ncclUniqueId id{};
  if (rank == 0) {
    if (ncclGetUniqueId(&id) != ncclSuccess) std::exit(1);
    const std::string temporary = path + ".tmp";
    std::ofstream(temporary, std::ios::binary).write(id.internal, sizeof id.internal);
    std::rename(temporary.c_str(), path.c_str());
    return id;
  }
  for (int tries = 0; tries < 2000; ++tries) {
    std::ifstream in(path, std::ios::binary);
    if (in && in.read(id.internal, sizeof id.internal)) return id;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::fprintf(stderr, "error: rank %d found no unique id in %s\n", rank, path.c_str());
  std::exit(1);
}

struct Rank {
  int rank, world;
  ncclComm_t comm;
  cudaStream_t stream;
};

[[noreturn]] void collective_failed(const Rank& r, const char* what, ncclResult_t result) {
  std::printf("nccl_ranks: rank %d: %s failed: %s\n", r.rank, what, ncclGetErrorString(result));
  std::fflush(stdout);
  std::exit(3);
}

void check_nccl(const Rank& r, ncclResult_t result, const char* what) {
  if (result != ncclSuccess) collective_failed(r, what, result);
}

// Waits for the stream, then reports a collective a peer broke.
void finish(const Rank& r, const char* what) {
  check_cuda(cudaStreamSynchronize(r.stream), "cudaStreamSynchronize");
  ncclResult_t async = ncclSuccess;
  ncclCommGetAsyncError(r.comm, &async);
  if (async != ncclSuccess) collective_failed(r, what, async);
}

void expect(const Rank& r, bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "error: rank %d: wrong result of %s\n", r.rank, what);
  std::exit(1);
}

std::vector<float> download(const float* device, size_t count) {
  std::vector<float> host(count);
  check_cuda(cudaMemcpy(host.data(), device, count * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return host;
}

void upload(float* device, const std::vector<float>& host) {
  check_cuda(cudaMemcpy(device, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
}

}  // namespace

int main(int argc, char** argv) {
  const Options options(argc, argv,
                        {"--ops", "--iterations", "--count", "--slow-rank", "--delay-ms", "--crash-rank", "--crash-after",
                         "--started-file"});
  const std::string ops = "," + options.text("--ops", "allreduce,allgather,reducescatter,broadcast,sendrecv") + ",";
  const int iterations = int(options.integer("--iterations", 3));
  const size_t count = size_t(options.integer("--count", 4096));
  const int slow_rank = int(options.integer("--slow-rank", -1));
  const int delay_ms = int(options.integer("--delay-ms", 0));
  const int crash_rank = int(options.integer("--crash-rank", -1));
  const int crash_after = int(options.integer("--crash-after", 0));
  // Created as PATH.rank<N> once the rank's first step is done: a test that
  // acts mid-run waits for it instead of guessing a time.
  const std::string started_file = options.text("--started-file", "");
  auto wants = [&](const char* op) { return ops.find("," + std::string(op) + ",") != std::string::npos; };

  Rank r{env_int("RANK", 0), env_int("WORLD_SIZE", 1), nullptr, nullptr};
  int devices = 0;
  check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  check_cuda(cudaSetDevice(env_int("LOCAL_RANK", r.rank) % devices), "cudaSetDevice");
  check_cuda(cudaStreamCreate(&r.stream), "cudaStreamCreate");
  const ncclUniqueId id = rendezvous(r.rank);
  check_nccl(r, ncclCommInitRank(&r.comm, r.world, id, r.rank), "ncclCommInitRank");

  float *send = nullptr, *recv = nullptr, *activations = nullptr;
  check_cuda(cudaMalloc(&send, count * r.world * sizeof(float)), "cudaMalloc");
  check_cuda(cudaMalloc(&recv, count * r.world * sizeof(float)), "cudaMalloc");
  check_cuda(cudaMalloc(&activations, count * sizeof(float)), "cudaMalloc");
  const float me = float(r.rank + 1);
  const float rank_sum = float(r.world * (r.world + 1) / 2);

  for (int step = 0; step < iterations; ++step) {
    if (r.rank == crash_rank && step == crash_after) {
      std::printf("nccl_ranks: rank %d crashing at step %d\n", r.rank, step);
      std::fflush(stdout);
      raise(SIGSEGV);
    }
    // "Forward and backward": compute on the rank's stream before the collectives.
    check_cuda(simtorch::fill(activations, int(count), me, r.stream), "fill kernel");
    check_cuda(simtorch::relu(activations, activations, int(count), r.stream), "relu kernel");
    if (r.rank == slow_rank) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    if (wants("allreduce")) {
      upload(send, std::vector<float>(count, me));
      check_nccl(r, ncclAllReduce(send, recv, count, ncclFloat32, ncclSum, r.comm, r.stream), "ncclAllReduce");
      finish(r, "ncclAllReduce");
      expect(r, download(recv, count)[count - 1] == rank_sum, "ncclAllReduce");
    }
    if (wants("allgather")) {
      upload(send, std::vector<float>(count, me));
      check_nccl(r, ncclAllGather(send, recv, count, ncclFloat32, r.comm, r.stream), "ncclAllGather");
      finish(r, "ncclAllGather");
      const auto all = download(recv, count * r.world);
      for (int b = 0; b < r.world; ++b) expect(r, all[b * count] == float(b + 1), "ncclAllGather");
    }
    if (wants("reducescatter")) {
      upload(send, std::vector<float>(count * r.world, me));
      check_nccl(r, ncclReduceScatter(send, recv, count, ncclFloat32, ncclSum, r.comm, r.stream),
                 "ncclReduceScatter");
      finish(r, "ncclReduceScatter");
      expect(r, download(recv, count)[0] == rank_sum, "ncclReduceScatter");
    }
    if (wants("broadcast")) {
      upload(send, std::vector<float>(count, r.rank == 0 ? 42.0f : 0.0f));
      check_nccl(r, ncclBroadcast(send, recv, count, ncclFloat32, 0, r.comm, r.stream), "ncclBroadcast");
      finish(r, "ncclBroadcast");
      expect(r, download(recv, count)[count / 2] == 42.0f, "ncclBroadcast");
    }
    if (wants("sendrecv") && r.world > 1) {
      upload(send, std::vector<float>(count, me));
      check_nccl(r, ncclGroupStart(), "ncclGroupStart");
      check_nccl(r, ncclSend(send, count, ncclFloat32, (r.rank + 1) % r.world, r.comm, r.stream), "ncclSend");
      check_nccl(r, ncclRecv(recv, count, ncclFloat32, (r.rank + r.world - 1) % r.world, r.comm, r.stream),
                 "ncclRecv");
      check_nccl(r, ncclGroupEnd(), "ncclGroupEnd");
      finish(r, "ncclSend/ncclRecv");
      expect(r, download(recv, count)[1] == float((r.rank + r.world - 1) % r.world + 1), "ncclSend/ncclRecv");
    }
    if (step == 0 && !started_file.empty()) {
      const std::string path = started_file + ".rank" + std::to_string(r.rank);
      if (std::FILE* file = std::fopen(path.c_str(), "w")) std::fclose(file);
    }
  }
  check_nccl(r, ncclCommDestroy(r.comm), "ncclCommDestroy");
  std::printf("nccl_ranks: rank=%d world=%d iterations=%d ok\n", r.rank, r.world, iterations);
  return 0;
}
