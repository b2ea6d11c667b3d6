// Driver access for the libraries' tests: what the test itself needs to
// observe the libraries (streams, events, memory info, contexts), resolved
// through cuGetProcAddress_v2 like the runtime does, plus the simulator's
// kernel cost knob. The tests never link libcuda or libcudart either.
#ifndef SIMGPU_LIBS_TEST_DRIVER_H
#define SIMGPU_LIBS_TEST_DRIVER_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>

#include "simgpu.h"

struct TestDriver {
  PFN_cuInit_v2000 init = nullptr;
  PFN_cuDeviceGet_v2000 device_get = nullptr;
  PFN_cuDeviceGetAttribute_v2000 device_get_attribute = nullptr;
  PFN_cuDevicePrimaryCtxRetain_v7000 primary_ctx_retain = nullptr;
  PFN_cuDevicePrimaryCtxRelease_v11000 primary_ctx_release = nullptr;
  PFN_cuCtxGetCurrent_v4000 ctx_get_current = nullptr;
  PFN_cuCtxSetCurrent_v4000 ctx_set_current = nullptr;
  PFN_cuStreamCreate_v2000 stream_create = nullptr;
  PFN_cuStreamDestroy_v4000 stream_destroy = nullptr;
  PFN_cuStreamSynchronize_v2000 stream_synchronize = nullptr;
  PFN_cuEventCreate_v2000 event_create = nullptr;
  PFN_cuEventDestroy_v4000 event_destroy = nullptr;
  PFN_cuEventRecord_v2000 event_record = nullptr;
  PFN_cuEventSynchronize_v2000 event_synchronize = nullptr;
  PFN_cuEventElapsedTime_v12080 event_elapsed_time = nullptr;
  PFN_cuMemGetInfo_v3020 mem_get_info = nullptr;
  PFN_cuMemAlloc_v3020 mem_alloc = nullptr;
  PFN_cuMemFree_v3020 mem_free = nullptr;
  PFN_cuLaunchHostFunc_v10000 launch_host_func = nullptr;
  PFN_simgpuSetKernelCost set_kernel_cost = nullptr;
  std::string error;

  // Loads libcuda.so.1; on failure `error` says what is missing.
  bool load() {
    void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (libcuda == nullptr) return fail(std::string("dlopen libcuda.so.1: ") + dlerror());
    auto get_proc = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(libcuda, "cuGetProcAddress_v2"));
    set_kernel_cost = reinterpret_cast<PFN_simgpuSetKernelCost>(dlsym(libcuda, "simgpuSetKernelCost"));
    if (get_proc == nullptr || set_kernel_cost == nullptr)
      return fail("libcuda.so.1 is not the simulated driver (no cuGetProcAddress_v2 or simgpuSetKernelCost)");
    const auto resolve = [&](const char* name, auto* fn) {
      void* address = nullptr;
      CUdriverProcAddressQueryResult status;
      if (get_proc(name, &address, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS ||
          address == nullptr)
        return fail(std::string("cuGetProcAddress_v2 cannot resolve ") + name);
      *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(address);
      return true;
    };
    return resolve("cuInit", &init) && resolve("cuDeviceGet", &device_get) &&
           resolve("cuDeviceGetAttribute", &device_get_attribute) &&
           resolve("cuDevicePrimaryCtxRetain", &primary_ctx_retain) &&
           resolve("cuDevicePrimaryCtxRelease", &primary_ctx_release) &&
           resolve("cuCtxGetCurrent", &ctx_get_current) && resolve("cuCtxSetCurrent", &ctx_set_current) &&
           resolve("cuStreamCreate", &stream_create) && resolve("cuStreamDestroy", &stream_destroy) &&
           resolve("cuStreamSynchronize", &stream_synchronize) && resolve("cuEventCreate", &event_create) &&
           resolve("cuEventDestroy", &event_destroy) && resolve("cuEventRecord", &event_record) &&
           resolve("cuEventSynchronize", &event_synchronize) &&
           resolve("cuEventElapsedTime", &event_elapsed_time) && resolve("cuMemGetInfo", &mem_get_info) &&
           resolve("cuMemAlloc", &mem_alloc) && resolve("cuMemFree", &mem_free) &&
           resolve("cuLaunchHostFunc", &launch_host_func) && init(0) == CUDA_SUCCESS;
  }

 private:
  bool fail(std::string message) {
    error = std::move(message);
    return false;
  }
};

// Device-side duration of whatever `enqueue` puts on `stream`, from events
// recorded around it. A host function holds the stream until everything is
// queued, so the start event and the measured work are both waiting when the
// stream reaches them: the measurement excludes host-side submission delays
// (however loaded the machine) and equals the modelled device time.
template <typename Enqueue>
double measured_duration_us(const TestDriver& driver, CUstream stream, Enqueue enqueue) {
  struct Gate {
    std::mutex mutex;
    std::condition_variable opened;
    bool open = false;
  } gate;
  CUevent start = nullptr, stop = nullptr;
  driver.event_create(&start, CU_EVENT_DEFAULT);
  driver.event_create(&stop, CU_EVENT_DEFAULT);
  driver.launch_host_func(
      stream,
      [](void* user_data) {
        Gate& g = *static_cast<Gate*>(user_data);
        std::unique_lock lock(g.mutex);
        g.opened.wait(lock, [&] { return g.open; });
      },
      &gate);
  driver.event_record(start, stream);
  enqueue();
  driver.event_record(stop, stream);
  {
    std::lock_guard lock(gate.mutex);
    gate.open = true;
  }
  gate.opened.notify_all();
  driver.event_synchronize(stop);
  float elapsed_ms = -1.f;
  driver.event_elapsed_time(&elapsed_ms, start, stop);
  driver.event_destroy(start);
  driver.event_destroy(stop);
  return double(elapsed_ms) * 1000.0;
}

#endif
