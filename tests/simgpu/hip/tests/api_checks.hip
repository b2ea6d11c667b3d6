// Bare checks of simulated HIP runtime entry points (no profiler), one per
// argument: `api_checks <check>` exits 0 when the entry point answers as
// hip_runtime_api.h / hiprtc.h document, 1 (with a message) when not.
// Kernels with known resources (hipcc for gfx90a): `lds_quarter` has 16 KiB
// of static LDS and at most 256 work-items per workgroup, `plain` neither.
#include <hip/hip_runtime.h>
#include <hip/hiprtc.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

__global__ void plain(float* x) { x[threadIdx.x] += 1.0f; }

__global__ void __launch_bounds__(256) lds_quarter(float* x) {
  __shared__ float tile[4096];  // 16 KiB
  tile[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = tile[(threadIdx.x * 7) & 4095];
}

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "FAILED: %s\n", what);
  ++failures;
}

void func_attributes() {
  hipFuncAttributes a;
  std::memset(&a, 0xff, sizeof a);
  expect(hipFuncGetAttributes(&a, reinterpret_cast<const void*>(lds_quarter)) == hipSuccess, "hipFuncGetAttributes");
  expect(a.sharedSizeBytes == 16384, "static LDS is 16 KiB");
  expect(a.maxThreadsPerBlock == 256, "__launch_bounds__(256)");
  expect(a.numRegs > 0 && a.numRegs <= 64, "VGPRs of a tiny kernel");
  expect(a.localSizeBytes == 0, "no scratch");
  expect(a.maxDynamicSharedSizeBytes == 65536 - 16384, "LDS left for dynamic use");
  expect(hipFuncGetAttributes(&a, reinterpret_cast<const void*>(plain)) == hipSuccess && a.sharedSizeBytes == 0 &&
             a.maxThreadsPerBlock == 1024,
         "plain kernel");
  expect(hipFuncGetAttributes(nullptr, reinterpret_cast<const void*>(plain)) == hipErrorInvalidValue, "null attr");
  int not_a_kernel = 0;
  expect(hipFuncGetAttributes(&a, &not_a_kernel) == hipErrorInvalidDeviceFunction, "unknown function");
}

void occupancy() {
  int blocks = -1;
  // 256 work-items = 4 waves; 16 KiB LDS of the CU's 64 KiB: 4 workgroups.
  expect(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reinterpret_cast<const void*>(lds_quarter), 256, 0) ==
             hipSuccess && blocks == 4,
         "LDS-limited: 4 workgroups");
  // 16 KiB + 16 KiB dynamic: 2 workgroups.
  expect(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reinterpret_cast<const void*>(lds_quarter), 256,
                                                      16384) == hipSuccess && blocks == 2,
         "dynamic LDS counts: 2 workgroups");
  // More work-items than the kernel's bound: none fit.
  expect(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reinterpret_cast<const void*>(lds_quarter), 512, 0) ==
             hipSuccess && blocks == 0,
         "beyond __launch_bounds__: 0");
  // A one-wave workgroup of a tiny kernel: 8 waves per SIMD on gfx90a, 4 SIMDs.
  expect(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reinterpret_cast<const void*>(plain), 64, 0) ==
             hipSuccess && blocks == 32,
         "wave-limited: 32 one-wave workgroups");
  expect(hipOccupancyMaxActiveBlocksPerMultiprocessor(nullptr, reinterpret_cast<const void*>(plain), 64, 0) ==
             hipErrorInvalidValue,
         "null numBlocks");
  int not_a_kernel = 0;
  expect(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, &not_a_kernel, 64, 0) == hipErrorInvalidDeviceFunction,
         "unknown function");
}

void peer_access() {
  int count = 0;
  expect(hipGetDeviceCount(&count) == hipSuccess && count >= 2, "two devices");
  expect(hipSetDevice(0) == hipSuccess, "device 0");
  expect(hipDeviceDisablePeerAccess(1) == hipErrorPeerAccessNotEnabled, "not enabled yet");
  (void)hipGetLastError();
  expect(hipDeviceEnablePeerAccess(1, 0) == hipSuccess, "enable");
  expect(hipDeviceDisablePeerAccess(1) == hipSuccess, "disable");
  expect(hipDeviceDisablePeerAccess(1) == hipErrorPeerAccessNotEnabled, "disabled twice");
  expect(hipDeviceDisablePeerAccess(count) == hipErrorInvalidDevice, "no such device");
  (void)hipGetLastError();
}

void image_support() {
  int value = -1;
  expect(hipDeviceGetAttribute(&value, hipDeviceAttributeImageSupport, 0) == hipSuccess, "answered");
  expect(value == 0 || value == 1, "1 or 0");
}

void hiprtc_log() {
  hiprtcProgram prog = nullptr;
  expect(hiprtcCreateProgram(&prog, "extern \"C\" __global__ void k() {}", "k.hip", 0, nullptr, nullptr) ==
             HIPRTC_SUCCESS, "create");
  size_t size = 12345;
  expect(hiprtcGetProgramLogSize(prog, &size) == HIPRTC_SUCCESS && size == 1, "empty log before compiling: 1");
  const hiprtcResult compiled = hiprtcCompileProgram(prog, 0, nullptr);
  size = 0;
  expect(hiprtcGetProgramLogSize(prog, &size) == HIPRTC_SUCCESS && size >= 1, "log size after compiling");
  std::vector<char> log(size, 'x');
  expect(hiprtcGetProgramLog(prog, log.data()) == HIPRTC_SUCCESS, "log");
  expect(log.back() == '\0' && std::strlen(log.data()) == size - 1, "log is size-1 chars and a NUL");
  if (compiled != HIPRTC_SUCCESS) expect(size > 1, "a failed compilation says why");
  expect(hiprtcGetProgramLogSize(prog, nullptr) == HIPRTC_ERROR_INVALID_INPUT, "null size");
  expect(hiprtcDestroyProgram(&prog) == HIPRTC_SUCCESS && prog == nullptr, "destroy");
  hiprtcProgram bogus = reinterpret_cast<hiprtcProgram>(&size);
  expect(hiprtcGetProgramLogSize(bogus, &size) == HIPRTC_ERROR_INVALID_PROGRAM, "not a program");
}

// For the profiler's end-to-end test: lds_quarter on 8 workgroups per CU,
// enough to fill every CU (4 fit at once, by LDS: 50% occupancy).
void launch_lds_quarter() {
  int cus = 0;
  expect(hipDeviceGetAttribute(&cus, hipDeviceAttributeMultiprocessorCount, 0) == hipSuccess, "CU count");
  float* x = nullptr;
  expect(hipMalloc(&x, 4096 * sizeof(float)) == hipSuccess, "hipMalloc");
  hipLaunchKernelGGL(lds_quarter, dim3(8 * cus), dim3(256), 0, nullptr, x);
  expect(hipGetLastError() == hipSuccess, "launch");
  hipLaunchKernelGGL(lds_quarter, dim3(8 * cus), dim3(256), 0, nullptr, x);
  expect(hipDeviceSynchronize() == hipSuccess, "sync");
  expect(hipFree(x) == hipSuccess, "hipFree");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string check = argc > 1 ? argv[1] : "";
  if (check == "func-attributes") func_attributes();
  else if (check == "occupancy") occupancy();
  else if (check == "peer-access") peer_access();
  else if (check == "image-support") image_support();
  else if (check == "hiprtc-log") hiprtc_log();
  else if (check == "launch-lds-quarter") launch_lds_quarter();
  else {
    std::fprintf(stderr, "usage: api_checks func-attributes|occupancy|peer-access|image-support|hiprtc-log\n");
    return 2;
  }
  return failures == 0 ? 0 : 1;
}
