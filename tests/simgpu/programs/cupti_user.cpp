// A program that uses CUPTI itself, as torch.profiler (Kineto) does: it
// subscribes to the callback API, enables activity records, runs kernels and
// copies, and reports what it received. Its report must be the same whether
// or not a profiler runs around it.
//
//   cupti_user [--subscribe before|after] [--launches N] [--in-flight K] [--dlopen] [--pm-sampling]
//
// before: CUPTI is set up before the first CUDA call; after: once half the
// launches ran (and were synchronized). --in-flight K (with after): K more
// fills of 400 ms each (modelled) are queued right before CUPTI is set up,
// so they are still running on the device when it is; they finish after,
// and their kernel records (not joined: their launch came before) count.
// --pm-sampling: once its work is done (and 300 ms later), it takes the CUPTI
// profiler too: cuptiProfilerInitialize, then PM sampling on device 0
// (cuptiPmSamplingEnable, Disable), and reports the result as
// " pm_sampling=<result>" at the end of its line.
// --dlopen: the entry points that take CUPTI (subscribe, buffer callbacks,
// activity enable) are looked up with dlsym on a dlopen'd libcupti.so.13,
// as XLA's profiler does, rather than called through the link.
// Prints
//   cupti_user: subscribe=<result> callbacks=C kernels=K memcpys=M runtime=R joined=J dropped=D
//               allocations=A releases=F
// where joined counts kernel records whose correlation id is a launch's
// RUNTIME record, and A and F the MEMORY2 records of its 4 KiB device buffer. Exits 1 on a CUDA error, 2 if a CUPTI call fails.
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_target.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <thread>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/cuda_check.h"
#include "common/kernels.h"
#include "common/modelled_costs.h"

namespace {

std::mutex g_mutex;
int g_callbacks = 0;
int g_kernels = 0;
int g_memcpys = 0;
int g_runtime = 0;
int g_allocations = 0;
int g_releases = 0;
std::set<uint32_t> g_launch_correlations;
std::vector<uint32_t> g_kernel_correlations;

void check_cupti(CUptiResult result, const char* what) {
  if (result == CUPTI_SUCCESS) return;
  const char* name = "?";
  cuptiGetResultString(result, &name);
  std::fprintf(stderr, "error: %s failed: %s\n", what, name);
  std::exit(2);
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && info->callbackSite == CUPTI_API_ENTER) {
    std::lock_guard lock(g_mutex);
    ++g_callbacks;
  }
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 64 * 1024;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  std::lock_guard lock(g_mutex);
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        ++g_kernels;
        g_kernel_correlations.push_back(reinterpret_cast<CUpti_ActivityKernel10*>(record)->correlationId);
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        ++g_memcpys;
        break;
      case CUPTI_ACTIVITY_KIND_MEMORY2: {
        const auto* memory = reinterpret_cast<CUpti_ActivityMemory4*>(record);
        if (memory->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE && memory->bytes == 1024 * sizeof(float)) {
          g_allocations += memory->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
          g_releases += memory->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
        }
        break;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME: {
        ++g_runtime;
        const auto* api = reinterpret_cast<CUpti_ActivityAPI*>(record);
        if (api->cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000 ||
            api->cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
          g_launch_correlations.insert(api->correlationId);
        break;
      }
      default:
        break;
    }
  }
  std::free(buffer);
}

// How set_up_cupti reaches the calls that take CUPTI.
struct TakeCupti {
  decltype(&::cuptiSubscribe) subscribe = &::cuptiSubscribe;
  decltype(&::cuptiActivityRegisterCallbacks) register_callbacks = &::cuptiActivityRegisterCallbacks;
  decltype(&::cuptiActivityEnable) enable = &::cuptiActivityEnable;
};

template <typename F>
void look_up(void* library, const char* name, F& slot) {
  slot = reinterpret_cast<F>(dlsym(library, name));
  if (slot == nullptr) {
    std::fprintf(stderr, "error: dlsym(%s): %s\n", name, dlerror());
    std::exit(2);
  }
}

TakeCupti dlopened_cupti() {
  void* library = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::fprintf(stderr, "error: dlopen(libcupti.so.13): %s\n", dlerror());
    std::exit(2);
  }
  TakeCupti take;
  look_up(library, "cuptiSubscribe", take.subscribe);
  look_up(library, "cuptiActivityRegisterCallbacks", take.register_callbacks);
  look_up(library, "cuptiActivityEnable", take.enable);
  return take;
}

std::string set_up_cupti(const TakeCupti& take) {
  CUpti_SubscriberHandle subscriber = nullptr;
  const CUptiResult subscribed = take.subscribe(&subscriber, on_callback, nullptr);
  const char* name = "?";
  cuptiGetResultString(subscribed, &name);
  if (subscribed == CUPTI_SUCCESS) check_cupti(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), "cuptiEnableDomain");
  check_cupti(take.register_callbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks");
  check_cupti(take.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityEnable(CONCURRENT_KERNEL)");
  check_cupti(take.enable(CUPTI_ACTIVITY_KIND_MEMCPY), "cuptiActivityEnable(MEMCPY)");
  check_cupti(take.enable(CUPTI_ACTIVITY_KIND_RUNTIME), "cuptiActivityEnable(RUNTIME)");
  check_cupti(take.enable(CUPTI_ACTIVITY_KIND_MEMORY2), "cuptiActivityEnable(MEMORY2)");
  return name;
}

void work(float* device, std::vector<float>& host, int launches) {
  for (int i = 0; i < launches; ++i) check_cuda(simtorch::fill(device, int(host.size()), float(i), nullptr), "fill");
  check_cuda(cudaMemcpy(host.data(), device, host.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

// The program's own PM sampling session on device 0: what Enable answered.
std::string take_pm_sampling() {
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CUpti_Profiler_Initialize_Params init{};
  init.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE;
  check_cupti(cuptiProfilerInitialize(&init), "cuptiProfilerInitialize");
  CUpti_PmSampling_Enable_Params enable{};
  enable.structSize = CUpti_PmSampling_Enable_Params_STRUCT_SIZE;
  enable.deviceIndex = 0;
  const CUptiResult enabled = cuptiPmSamplingEnable(&enable);
  const char* name = "?";
  cuptiGetResultString(enabled, &name);
  if (enabled == CUPTI_SUCCESS) {
    CUpti_PmSampling_Disable_Params disable{};
    disable.structSize = CUpti_PmSampling_Disable_Params_STRUCT_SIZE;
    disable.pPmSamplingObject = enable.pPmSamplingObject;
    check_cupti(cuptiPmSamplingDisable(&disable), "cuptiPmSamplingDisable");
  }
  return name;
}

}  // namespace

int main(int argc, char** argv) {
  std::string when = "before";
  int launches = 8;
  int in_flight = 0;
  bool use_dlopen = false;
  bool pm_sampling = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--subscribe") == 0 && i + 1 < argc) {
      when = argv[++i];
    } else if (std::strcmp(argv[i], "--launches") == 0 && i + 1 < argc) {
      launches = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--in-flight") == 0 && i + 1 < argc) {
      in_flight = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--dlopen") == 0) {
      use_dlopen = true;
    } else if (std::strcmp(argv[i], "--pm-sampling") == 0) {
      pm_sampling = true;
    } else {
      std::fprintf(stderr, "usage: cupti_user [--subscribe before|after] [--launches N] [--in-flight K] [--dlopen] [--pm-sampling]\n");
      return 64;
    }
  }
  if (when != "before" && when != "after") {
    std::fprintf(stderr, "cupti_user: --subscribe takes before or after\n");
    return 64;
  }
  if (in_flight < 0 || (in_flight > 0 && when != "after")) {
    std::fprintf(stderr, "cupti_user: --in-flight takes a count, with --subscribe after\n");
    return 64;
  }
  const TakeCupti take = use_dlopen ? dlopened_cupti() : TakeCupti{};
  std::string subscribed;
  if (when == "before") subscribed = set_up_cupti(take);
  std::vector<float> host(1024);
  float* device = nullptr;
  check_cuda(cudaMalloc(&device, host.size() * sizeof(float)), "cudaMalloc");
  if (when == "after") {
    work(device, host, launches / 2);
    if (in_flight > 0) {
      set_modelled_kernel_duration(simtorch::kernel_host_functions().fill, 400'000'000);
      for (int i = 0; i < in_flight; ++i)
        check_cuda(simtorch::fill(device, int(host.size()), -1.0f, nullptr), "fill (in flight)");
      set_modelled_kernel_duration(simtorch::kernel_host_functions().fill, 0);
    }
    subscribed = set_up_cupti(take);
  }
  work(device, host, when == "after" ? launches - launches / 2 : launches);
  const std::string pm = pm_sampling ? " pm_sampling=" + take_pm_sampling() : "";
  check_cuda(cudaFree(device), "cudaFree");
  check_cupti(cuptiActivityFlushAll(1), "cuptiActivityFlushAll");
  size_t dropped = 0;
  check_cupti(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), "cuptiActivityGetNumDroppedRecords");
  std::lock_guard lock(g_mutex);
  int joined = 0;
  for (uint32_t correlation : g_kernel_correlations) joined += g_launch_correlations.count(correlation) != 0;
  std::printf(
      "cupti_user: subscribe=%s callbacks=%d kernels=%d memcpys=%d runtime=%d joined=%d dropped=%zu "
      "allocations=%d releases=%d%s\n",
      subscribed.c_str(), g_callbacks, g_kernels, g_memcpys, g_runtime, joined, dropped, g_allocations, g_releases,
      pm.c_str());
  return 0;
}
