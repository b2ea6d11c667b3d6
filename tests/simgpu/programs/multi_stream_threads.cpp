// N worker threads, each with its own non-blocking stream, each copying a
// pinned batch to the device, launching kernels on it and copying back.
// Worker i runs (i + 1) * iterations rounds, so workers finish and exit at
// different times while the others keep going: thread exit is part of what
// is exercised. Worker threads are named "worker-<i>" (pthread_setname_np);
// the main thread keeps the process name, since renaming it renames the
// process (/proc/self/comm).
//
// usage: multi_stream_threads [--threads N=4] [--iterations M=10] [--elements E=65536]
#include <pthread.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common/cuda_check.h"
#include "common/kernels.h"
#include "common/options.h"

namespace {

struct WorkerResult {
  long launches = 0;
  long copies = 0;
  bool data_ok = true;
};

void run_worker(int index, int rounds, int elements, WorkerResult* result) {
  const std::string name = "worker-" + std::to_string(index);
  pthread_setname_np(pthread_self(), name.c_str());

  check_cuda(cudaSetDevice(0), "cudaSetDevice");
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
             "cudaStreamCreateWithFlags");
  const size_t bytes = size_t(elements) * sizeof(float);
  float* host_in = nullptr;
  float* host_back = nullptr;
  check_cuda(cudaMallocHost(&host_in, bytes), "cudaMallocHost");
  check_cuda(cudaMallocHost(&host_back, bytes), "cudaMallocHost");
  float* device_in = nullptr;
  float* device_out = nullptr;
  check_cuda(cudaMalloc(&device_in, bytes), "cudaMalloc");
  check_cuda(cudaMalloc(&device_out, bytes), "cudaMalloc");

  for (int round = 0; round < rounds; ++round) {
    for (int e = 0; e < elements; ++e) host_in[e] = float(index * 1000 + round) + float(e % 7);
    check_cuda(cudaMemcpyAsync(device_in, host_in, bytes, cudaMemcpyHostToDevice, stream), "H2D");
    check_cuda(simtorch::fill(device_out, elements, 0.f, stream), "fill launch");
    check_cuda(simtorch::add(device_out, device_out, device_in, 2.f, elements, stream),
               "add launch");
    // The round trip reads back the input buffer, which the kernels only
    // read: the check holds on the simulator (kernels do not execute) and on
    // a real GPU alike.
    check_cuda(cudaMemcpyAsync(host_back, device_in, bytes, cudaMemcpyDeviceToHost, stream), "D2H");
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    if (std::memcmp(host_in, host_back, bytes) != 0) result->data_ok = false;
    result->launches += 2;
    result->copies += 2;
  }

  check_cuda(cudaFree(device_out), "cudaFree");
  check_cuda(cudaFree(device_in), "cudaFree");
  check_cuda(cudaFreeHost(host_back), "cudaFreeHost");
  check_cuda(cudaFreeHost(host_in), "cudaFreeHost");
  check_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

}  // namespace

int main(int argc, char** argv) {
  const Options options(argc, argv, {"--threads", "--iterations", "--elements"});
  const int threads = int(options.integer("--threads", 4));
  const int iterations = int(options.integer("--iterations", 10));
  const int elements = int(options.integer("--elements", 65536));
  if (threads < 1 || iterations < 1 || elements < 1) {
    std::fprintf(stderr, "error: --threads, --iterations and --elements must be positive\n");
    return 2;
  }

  std::vector<WorkerResult> results(threads);
  std::vector<std::thread> workers;
  for (int i = 0; i < threads; ++i)
    workers.emplace_back(run_worker, i, (i + 1) * iterations, elements, &results[i]);
  for (std::thread& worker : workers) worker.join();

  long launches = 0, copies = 0;
  bool data_ok = true;
  for (const WorkerResult& r : results) {
    launches += r.launches;
    copies += r.copies;
    data_ok = data_ok && r.data_ok;
  }
  if (!data_ok) {
    std::fprintf(stderr, "error: a device round trip returned different data\n");
    return 1;
  }
  std::printf("multi_stream_threads: threads=%d launches=%ld copies=%ld ok\n", threads, launches,
              copies);
  return 0;
}
