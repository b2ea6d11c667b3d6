// Which driver calls, made during a global-mode stream capture that holds a
// cudaMallocAsync, invalidate it? Each probe runs in a capture of its own,
// from the capturing thread and from another thread, in global and in
// relaxed mode; one line per probe says what the call returned and whether
// the capture survived. Run by tests/gpu/validate.sh untraced and traced:
// the shim must not change a line. (On an H200, driver 580:
// docs/validation.md, "On a real GPU".)
//
//   nvcc -cudart shared -o capture_probe capture_probe.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>
#include <thread>
__global__ void k(float* x) { if (x) x[threadIdx.x] = 1.f; }
static const char* probe_names[] = {"nothing", "cuCtxGetCurrent", "cuStreamGetCaptureInfo", "cuPointerGetAttribute(MEMPOOL_HANDLE, graph alloc)",
  "cuPointerGetAttribute(MEMPOOL_HANDLE, plain alloc)", "cuDeviceGetMemPool", "cuMemPoolGetAttribute(RESERVED_MEM_CURRENT)",
  "cuMemGetInfo", "cuEventQuery(other stream)", "cuEventRecord+Query(other stream)", "cuPointerGetAttribute(CONTEXT, graph alloc)",
  "cuMemGetAddressRange(graph alloc)"};
int main() {
  cudaFree(0);
  float* plain = nullptr; cudaMalloc(&plain, 4096);
  cudaStream_t s, other; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking);
  cudaEvent_t ev; cudaEventCreate(&ev); cudaEventRecord(ev, other);
  const int n = sizeof probe_names / sizeof probe_names[0];
  for (int mode = 0; mode < 2; ++mode)                // 0: probe on the capturing thread, 1: on another thread
    for (int relaxed = 0; relaxed < 2; ++relaxed)     // the probing thread exchanged to relaxed mode first
      for (int p = 0; p < n; ++p) {
        cudaGetLastError();
        if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess) { printf("begin failed\n"); return 1; }
        void* g = nullptr; cudaError_t ma = cudaMallocAsync(&g, 1 << 20, s);
        k<<<1, 32, 0, s>>>((float*)g);
        CUresult r = CUDA_SUCCESS;
        auto probe = [&] {
          CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
          if (relaxed) cuThreadExchangeStreamCaptureMode(&m);
          CUcontext c; CUmemoryPool pool = nullptr; cuuint64_t v = 0; size_t f, t; CUstreamCaptureStatus st; cuuint64_t id;
          CUdeviceptr base; size_t sz;
          switch (p) {
            case 1: r = cuCtxGetCurrent(&c); break;
            case 2: r = cuStreamGetCaptureInfo((CUstream)s, &st, &id, nullptr, nullptr, nullptr, nullptr); break;
            case 3: r = cuPointerGetAttribute(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, (CUdeviceptr)g); break;
            case 4: r = cuPointerGetAttribute(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, (CUdeviceptr)plain); break;
            case 5: r = cuDeviceGetMemPool(&pool, 0); break;
            case 6: cuDeviceGetMemPool(&pool, 0); r = cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v); break;
            case 7: r = cuMemGetInfo(&f, &t); break;
            case 8: r = cuEventQuery((CUevent)ev); break;
            case 9: r = cuEventRecord((CUevent)ev, (CUstream)other); if (r == CUDA_SUCCESS) r = cuEventQuery((CUevent)ev); break;
            case 10: r = cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, (CUdeviceptr)g); break;
            case 11: r = cuMemGetAddressRange(&base, &sz, (CUdeviceptr)g); break;
          }
          if (relaxed) cuThreadExchangeStreamCaptureMode(&m);
        };
        if (mode == 0) probe(); else { std::thread t(probe); t.join(); }
        k<<<1, 32, 0, s>>>((float*)g);
        cudaError_t launch = cudaGetLastError();
        cudaFreeAsync(g, s);
        cudaGraph_t graph = nullptr; cudaError_t end = cudaStreamEndCapture(s, &graph);
        printf("capture_probe: %-8s %-8s %-55s malloc=%d probe=%d launch_after=%d end=%d %s\n", mode ? "other" : "same",
               relaxed ? "relaxed" : "global", probe_names[p], int(ma), int(r), int(launch), int(end),
               end == cudaSuccess && launch == cudaSuccess ? "capture OK" : "CAPTURE BROKEN");
        if (graph) cudaGraphDestroy(graph);
        cudaGetLastError();
      }
  return 0;
}
