// Finding and loading CUPTI (libcupti.so.13 of the CUDA 13 toolkit) where
// users have it, and the entry points the backend calls. Never fails the
// program: absent or unusable, the backend says why and events time the GPU.
//
// Where it looks, first hit wins:
//   1. a libcupti already loaded in the process (the program's own);
//   2. next to the loaded libcudart: the pip layout of PyTorch wheels
//      (site-packages/nvidia/cuda_runtime/lib -> nvidia/cuda_cupti/lib);
//   3. the dynamic loader's search (LD_LIBRARY_PATH, RUNPATH, ld.so.cache);
//   4. the toolkit: $CUDA_HOME, then /usr/local/cuda (lib64, extras/CUPTI/lib64, lib).
// The shim's own lookups go through libc's dlsym, never its own interposer.
#pragma once

#include <cupti.h>

namespace proflaunch::cuda {

struct CuptiLibrary {
  void* handle = nullptr;
  char path[512] = {};
  decltype(&::cuptiSubscribe) subscribe = nullptr;
  decltype(&::cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&::cuptiEnableCallback) enable_callback = nullptr;
  decltype(&::cuptiGetCallbackName) callback_name = nullptr;
  decltype(&::cuptiActivityEnable) activity_enable = nullptr;
  decltype(&::cuptiActivityDisable) activity_disable = nullptr;
  decltype(&::cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&::cuptiActivityRegisterTimestampCallback) register_timestamp = nullptr;
  decltype(&::cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&::cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&::cuptiActivityGetNumDroppedRecords) dropped_records = nullptr;
  decltype(&::cuptiGetGraphNodeId) graph_node_id = nullptr;
  decltype(&::cuptiGetResultString) result_string = nullptr;
};

// Loads CUPTI once; null with `why` (a static string) when it cannot be.
const CuptiLibrary* load_cupti(const char** why) noexcept;

// The name of a CUPTI result, for messages.
const char* cupti_result_name(const CuptiLibrary& cupti, CUptiResult result) noexcept;

}  // namespace proflaunch::cuda
