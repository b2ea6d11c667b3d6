// Coexistence with a program that uses CUPTI itself (torch.profiler, any
// Kineto or CUPTI-based tool in the process). CUPTI has one subscriber and
// one set of activity buffers per process, so the shim exports the entry
// points through which a program takes CUPTI; the program's first such call
// makes the shim give CUPTI up (cupti_yield_to_program) before the call goes
// on to the real library, which then behaves exactly as without the shim.
// The shim itself never calls these exports: it calls CUPTI through the
// pointers cupti_library.cpp resolved.
//
// The profiler's entry points are here too: CUPTI has one PM sampling or
// profiling session per device, so the program's first cuptiPmSamplingEnable,
// cuptiRangeProfilerEnable or cuptiProfilerBeginSession makes the shim's PM
// sampling (--gpu-metrics-counters, pm_sampling.h) stop first; the activity
// backend is unaffected (the profiler does not use activity buffers).
//
// Also here: InitializeInjection, which a real driver calls inside cuInit
// when CUDA_INJECTION64_PATH names this library (the launcher sets it).
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>

#include "preload/cuda/cupti/cupti_interpose.h"
#include "preload/cuda/cupti/gpu_timing_cupti.h"
#include "preload/cuda/cupti/pm_sampling.h"
#include "preload/intercept/hook_registry.h"

namespace {

constexpr const char* kCuptiLibrary = "libcupti.so";

// The real entry points: filled by the dlsym interception when the program
// looks one up on its own handle (as XLA's and other dlopen-based CUPTI
// users do; the program then gets these wrappers), else resolved at the
// first call through the shim's export.
void* real_cuptiSubscribe = nullptr;
void* real_cuptiSubscribe_v2 = nullptr;
void* real_cuptiActivityRegisterCallbacks = nullptr;
void* real_cuptiActivityEnable = nullptr;
void* real_cuptiActivityEnableContext = nullptr;
void* real_cuptiActivityRegisterTimestampCallback = nullptr;
void* real_cuptiPmSamplingEnable = nullptr;
void* real_cuptiRangeProfilerEnable = nullptr;
void* real_cuptiProfilerBeginSession = nullptr;

}  // namespace

#define PROFLAUNCH_CUPTI_FORWARD(name, params, args)                                                   \
  extern "C" __attribute__((visibility("default"))) CUptiResult CUPTIAPI name params {                  \
    proflaunch::cuda::cupti_yield_to_program(#name);                                                   \
    const auto real = proflaunch::hooks::real_function<decltype(::name)>(real_##name, #name, kCuptiLibrary); \
    return real != nullptr ? real args : CUPTI_ERROR_NOT_INITIALIZED;                                  \
  }

PROFLAUNCH_CUPTI_FORWARD(cuptiSubscribe, (CUpti_SubscriberHandle * subscriber, CUpti_CallbackFunc callback, void* userdata),
                         (subscriber, callback, userdata))
PROFLAUNCH_CUPTI_FORWARD(cuptiSubscribe_v2,
                         (CUpti_SubscriberHandle * subscriber, CUpti_CallbackFunc callback, void* userdata,
                          CUpti_SubscriberParams* params),
                         (subscriber, callback, userdata, params))
PROFLAUNCH_CUPTI_FORWARD(cuptiActivityRegisterCallbacks,
                         (CUpti_BuffersCallbackRequestFunc requested, CUpti_BuffersCallbackCompleteFunc completed),
                         (requested, completed))
PROFLAUNCH_CUPTI_FORWARD(cuptiActivityEnable, (CUpti_ActivityKind kind), (kind))
PROFLAUNCH_CUPTI_FORWARD(cuptiActivityEnableContext, (CUcontext context, CUpti_ActivityKind kind), (context, kind))
PROFLAUNCH_CUPTI_FORWARD(cuptiActivityRegisterTimestampCallback, (CUpti_TimestampCallbackFunc callback), (callback))

// The profiler's sessions: the shim's PM sampling steps back, GPU timing stays.
#define PROFLAUNCH_CUPTI_PROFILER_FORWARD(name, params, args)                                          \
  extern "C" __attribute__((visibility("default"))) CUptiResult CUPTIAPI name params {                  \
    proflaunch::cuda::pm_sampling_yield_to_program(#name);                                             \
    const auto real = proflaunch::hooks::real_function<decltype(::name)>(real_##name, #name, kCuptiLibrary); \
    return real != nullptr ? real args : CUPTI_ERROR_NOT_INITIALIZED;                                  \
  }

PROFLAUNCH_CUPTI_PROFILER_FORWARD(cuptiPmSamplingEnable, (CUpti_PmSampling_Enable_Params * params), (params))
PROFLAUNCH_CUPTI_PROFILER_FORWARD(cuptiRangeProfilerEnable, (CUpti_RangeProfiler_Enable_Params * params), (params))
PROFLAUNCH_CUPTI_PROFILER_FORWARD(cuptiProfilerBeginSession, (CUpti_Profiler_BeginSession_Params * params), (params))

#undef PROFLAUNCH_CUPTI_PROFILER_FORWARD
#undef PROFLAUNCH_CUPTI_FORWARD

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  proflaunch::cuda::start_cupti_timing();
  return 1;
}

namespace proflaunch::cuda {

#define PROFLAUNCH_CUPTI_HOOK(symbol) PROFLAUNCH_HOOK(symbol, nullptr, 0, false, kCuptiLibrary, real_##symbol)

hooks::HookFamily cupti_coexistence_hooks() {
  // Sorted by the registry; the order here does not matter.
  static const intercept::HookEntry kHooks[] = {
      PROFLAUNCH_CUPTI_HOOK(cuptiSubscribe),
      PROFLAUNCH_CUPTI_HOOK(cuptiSubscribe_v2),
      PROFLAUNCH_CUPTI_HOOK(cuptiActivityRegisterCallbacks),
      PROFLAUNCH_CUPTI_HOOK(cuptiActivityEnable),
      PROFLAUNCH_CUPTI_HOOK(cuptiActivityEnableContext),
      PROFLAUNCH_CUPTI_HOOK(cuptiActivityRegisterTimestampCallback),
      PROFLAUNCH_CUPTI_HOOK(cuptiPmSamplingEnable),
      PROFLAUNCH_CUPTI_HOOK(cuptiRangeProfilerEnable),
      PROFLAUNCH_CUPTI_HOOK(cuptiProfilerBeginSession),
  };
  return {kHooks, std::size(kHooks)};
}

}  // namespace proflaunch::cuda
