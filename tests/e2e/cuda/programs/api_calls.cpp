// Calls that hand-kept hook lists miss, made the ways real programs make
// them, each printed with its result so a test can find every one in the
// trace: context creation through the driver's older ABI (dlsym'ed, as a
// library that dlopens libcuda would), copies between two GPUs asked for as
// cudaMemcpyDefault, cuMemcpy, device to device and peer, 2D copies and
// memsets, host functions, the occupancy API, trivial getters called in a
// loop (counted, not recorded), failing calls, and a last call that fails
// and ends the program (exit status 3). cuGetProcAddress and the getters
// are counted (COUNT lines give the least the trace must count).
//
// Output, one line per call: "CALL <api> <result>" (in the order made, all
// on the main thread), "COUNT <api> <n>" for calls made n times, and
// "COPY <api> <src device> <dst device>" for the copies between devices.
//
// usage: api_calls     (needs two simulated devices: SIMGPU_DEVICE_COUNT=2)
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

int print_call(const char* api, int result) {
  std::printf("CALL %s %d\n", api, result);
  return result;
}

#define CALL(api, ...) print_call(#api, static_cast<int>(api(__VA_ARGS__)))
// A driver function reached through a pointer, printed under its API name.
#define CALL_POINTER(api_name, pointer, ...) print_call(api_name, static_cast<int>(pointer(__VA_ARGS__)))

void CUDART_CB stream_callback(cudaStream_t, cudaError_t, void*) {}
void host_function(void*) {}

__attribute__((noreturn)) void fail(const char* what) {
  std::fprintf(stderr, "api_calls: %s\n", what);
  std::exit(1);
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  // ---- the driver, reached as a library that dlopens it does.
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) fail("no libcuda.so.1");
  auto* init = reinterpret_cast<PFN_cuInit_v2000>(dlsym(driver, "cuInit"));
  auto* device_get = reinterpret_cast<PFN_cuDeviceGet_v2000>(dlsym(driver, "cuDeviceGet"));
  // cuda.h names cuCtxCreate_v4 today; a library built against an older
  // toolkit (or asking for the 3.2 ABI) calls cuCtxCreate_v2.
  auto* context_create_v2 = reinterpret_cast<PFN_cuCtxCreate_v3020>(dlsym(driver, "cuCtxCreate_v2"));
  auto* context_destroy = reinterpret_cast<PFN_cuCtxDestroy_v4000>(dlsym(driver, "cuCtxDestroy_v2"));
  auto* context_pop = reinterpret_cast<PFN_cuCtxPopCurrent_v4000>(dlsym(driver, "cuCtxPopCurrent_v2"));
  auto* get_proc_address = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(driver, "cuGetProcAddress_v2"));
  if (!init || !device_get || !context_create_v2 || !context_destroy || !context_pop || !get_proc_address)
    fail("the driver lacks an entry point");
  CALL_POINTER("cuInit", init, 0);
  CUdevice device = 0;
  CALL_POINTER("cuDeviceGet", device_get, &device, 0);
  CUcontext context = nullptr;
  CALL_POINTER("cuCtxCreate", context_create_v2, &context, 0, device);
  CUcontext popped = nullptr;
  CALL_POINTER("cuCtxPopCurrent", context_pop, &popped);
  CALL_POINTER("cuCtxDestroy", context_destroy, context);

  // ---- the runtime on two devices.
  int devices = 0;
  cudaGetDeviceCount(&devices);
  if (devices < 2) fail("needs two devices (SIMGPU_DEVICE_COUNT=2)");
  const size_t bytes = 1 << 16;
  void* on0 = nullptr;
  void* on1 = nullptr;
  CALL(cudaSetDevice, 0);
  CALL(cudaMalloc, &on0, bytes);
  CALL(cudaSetDevice, 1);
  CALL(cudaMalloc, &on1, bytes);
  CALL(cudaDeviceEnablePeerAccess, 0, 0);
  CALL(cudaSetDevice, 0);
  CALL(cudaDeviceEnablePeerAccess, 1, 0);
  // Copies between the two GPUs, however asked for, are peer copies.
  CALL(cudaMemcpy, on1, on0, bytes, cudaMemcpyDefault);
  std::printf("COPY cudaMemcpy 0 1\n");
  CALL(cudaMemcpy, on0, on1, bytes, cudaMemcpyDeviceToDevice);
  std::printf("COPY cudaMemcpy 1 0\n");
  CALL(cudaMemcpyPeer, on1, 1, on0, 0, bytes);
  std::printf("COPY cudaMemcpyPeer 0 1\n");
  CALL(cudaMemcpyAsync, on0, on1, bytes, cudaMemcpyDefault, nullptr);
  std::printf("COPY cudaMemcpyAsync 1 0\n");
  CALL(cudaDeviceSynchronize);
  void* memcpy_unified = nullptr;
  CALL_POINTER("cuGetProcAddress", get_proc_address, "cuMemcpy", &memcpy_unified, 12000, 0, nullptr);
  auto* unified_copy = reinterpret_cast<PFN_cuMemcpy_v4000>(memcpy_unified);
  CALL_POINTER("cuMemcpy", unified_copy, reinterpret_cast<CUdeviceptr>(on1), reinterpret_cast<CUdeviceptr>(on0), bytes);
  std::printf("COPY cuMemcpy 0 1\n");

  // ---- 2D copies and memsets, pageable host memory.
  std::vector<unsigned char> host(bytes, 7);
  CALL(cudaMemcpy2D, on0, 1024, host.data(), 1024, 1024, bytes / 1024, cudaMemcpyHostToDevice);
  CALL(cudaMemset2D, on0, 1024, 1, 512, bytes / 1024);
  CALL(cudaMemset2DAsync, on0, 1024, 2, 512, bytes / 1024, nullptr);

  // ---- host functions on a stream.
  cudaStream_t stream = nullptr;
  CALL(cudaStreamCreate, &stream);
  CALL(cudaLaunchHostFunc, stream, host_function, nullptr);
  CALL(cudaStreamAddCallback, stream, stream_callback, nullptr, 0);
  void* launch_host_func = nullptr;
  CALL_POINTER("cuGetProcAddress", get_proc_address, "cuLaunchHostFunc", &launch_host_func, 12000, 0, nullptr);
  CALL_POINTER("cuLaunchHostFunc", reinterpret_cast<PFN_cuLaunchHostFunc_v10000>(launch_host_func), stream, host_function, nullptr);
  CALL(cudaStreamSynchronize, stream);

  // ---- trivial getters in a loop: counted, not recorded.
  const int getter_calls = 100;
  for (int i = 0; i < getter_calls; ++i) {
    int current = -1;
    cudaGetDevice(&current);
    cudaGetLastError();
  }
  std::printf("COUNT cudaGetDevice %d\n", getter_calls);
  std::printf("COUNT cudaGetLastError %d\n", getter_calls);

  // ---- failing calls: recorded with their error.
  void* huge = nullptr;
  CALL(cudaMalloc, &huge, size_t{1} << 50);
  CALL(cudaGetLastError);  // a counted getter that returns an error: recorded in full
  CALL(cudaSetDevice, 99);
  CALL(cudaGetLastError);

  CALL(cudaStreamDestroy, stream);
  CALL(cudaFree, on0);
  CALL(cudaFree, on1);
  // The last call fails, and the program ends on it: the line a user most needs.
  const int last = CALL(cudaMemcpy, host.data(), host.data(), 16, static_cast<cudaMemcpyKind>(42));
  std::fflush(stdout);
  return last == 0 ? 0 : 3;
}
