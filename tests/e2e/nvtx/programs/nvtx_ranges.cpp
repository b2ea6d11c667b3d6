// NVTX as programs use it, with the toolkit's real nvtx3 headers, around
// GPU work on the simulated CUDA stack:
//  - "step N" push/pop ranges around copies and memsets, with a nested
//    "forward" range, a coloured mark with a double payload;
//  - a library module (libnvtx_module.so) with its own NVTX state and domain,
//    and a user synchronization object there (acquired, released, failed);
//  - two worker threads named with nvtxNameOsThreadA, each with its own ranges;
//  - a start/end range started on the main thread and ended on a worker;
//  - a pop with nothing pushed (NVTX returns -1);
//  - a 20 000-character message (longer than a record holds);
//  - a wide-character message;
//  - a stream named with nvtxNameCudaStreamA;
//  - a range left open at exit (or, with --crash, at a SIGSEGV).
//
//   nvtx_ranges [--steps N] [--crash]
//
// stdout: what it did, one line per part, so a test can compare.
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

extern "C" int nvtx_module_work(int calls);
extern "C" void nvtx_module_sync();

#define CHECK(call)                                                                  \
  do {                                                                               \
    cudaError_t e_ = (call);                                                         \
    if (e_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "nvtx_ranges: %s: %s\n", #call, cudaGetErrorName(e_));    \
      std::exit(2);                                                                  \
    }                                                                                \
  } while (0)

int main(int argc, char** argv) {
  int steps = 3;
  bool crash = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) steps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--crash")) crash = true;
    else {
      std::fprintf(stderr, "usage: %s [--steps N] [--crash]\n", argv[0]);
      return 64;
    }
  }
  constexpr size_t kBytes = 1 << 20;
  void* device = nullptr;
  void* host = std::malloc(kBytes);
  std::memset(host, 1, kBytes);
  cudaStream_t stream;
  CHECK(cudaMalloc(&device, kBytes));
  CHECK(cudaStreamCreate(&stream));
  nvtxNameCudaStreamA(stream, "copy stream");

  const nvtxRangeId_t whole = nvtxRangeStartA("whole run");
  for (int step = 0; step < steps; ++step) {
    const std::string name = "step " + std::to_string(step);
    const int level = nvtxRangePushA(name.c_str());
    CHECK(cudaMemcpyAsync(device, host, kBytes, cudaMemcpyHostToDevice, stream));
    nvtxRangePushA("forward");
    CHECK(cudaMemsetAsync(device, 0, kBytes, stream));
    nvtxEventAttributes_t mark = {};
    mark.version = NVTX_VERSION;
    mark.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    mark.colorType = NVTX_COLOR_ARGB;
    mark.color = 0xFF00FF00;
    mark.messageType = NVTX_MESSAGE_TYPE_ASCII;
    mark.message.ascii = "loss computed";
    mark.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
    mark.payload.dValue = 0.5 * step;
    nvtxMarkEx(&mark);
    nvtxRangePop();
    CHECK(cudaStreamSynchronize(stream));
    const int popped = nvtxRangePop();
    if (popped != level) std::printf("nvtx_ranges: pop returned %d for level %d\n", popped, level);
  }
  std::printf("nvtx_ranges: %d steps\n", steps);
  std::printf("nvtx_ranges: module total %d\n", nvtx_module_work(4));
  nvtx_module_sync();

  std::thread workers[2];
  for (int w = 0; w < 2; ++w) {
    workers[w] = std::thread([w, whole] {
      const std::string thread_name = "nvtx worker " + std::to_string(w);
      nvtxNameOsThreadA(static_cast<uint32_t>(syscall(SYS_gettid)), thread_name.c_str());
      for (int i = 0; i < 2; ++i) {
        nvtxRangePushA(("worker " + std::to_string(w) + " item").c_str());
        nvtxRangePop();
      }
      if (w == 1) nvtxRangeEnd(whole);  // started on the main thread
    });
  }
  for (std::thread& t : workers) t.join();
  std::printf("nvtx_ranges: workers done\n");

  // Without a tool NVTX answers -2 (no tracking), with one -1: negative either way.
  std::printf("nvtx_ranges: unmatched pop negative: %s\n", nvtxRangePop() < 0 ? "yes" : "no");
  const std::string long_message(20000, 'x');
  nvtxMarkA(long_message.c_str());
  nvtxMarkW(L"wide \u00e9t\u00e9 \u2713");
  std::printf("nvtx_ranges: marks done\n");

  CHECK(cudaFree(device));
  std::free(host);
  nvtxRangePushA("left open");
  std::fflush(stdout);
  if (crash) raise(SIGSEGV);
  return 0;
}
