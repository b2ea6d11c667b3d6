#include "preload/cuda/cupti/cupti_library.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "preload/intercept/dlsym_interposer.h"

namespace proflaunch::cuda {
namespace {

constexpr const char* kSoname = "libcupti.so.13";

void* lookup(void* handle, const char* name) { return intercept::real_dlsym()(handle, name); }

// The loaded libcudart's directory, through the loader's own list.
bool cudart_directory(char* out, size_t size) {
  struct Found {
    char* out;
    size_t size;
    bool found;
  } found{out, size, false};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto* f = static_cast<Found*>(data);
        const char* name = info->dlpi_name;
        if (name == nullptr || std::strstr(name, "libcudart.so") == nullptr) return 0;
        const char* slash = std::strrchr(name, '/');
        if (slash == nullptr) return 0;
        const size_t length = size_t(slash - name);
        if (length + 1 > f->size) return 0;
        std::memcpy(f->out, name, length);
        f->out[length] = '\0';
        f->found = true;
        return 1;
      },
      &found);
  return found.found;
}

void* try_open(const char* path, int flags) { return path[0] != '\0' ? dlopen(path, flags) : nullptr; }

void* open_cupti(char* path, size_t size) {
  // 1. already loaded (the program's own CUPTI: the one to coexist with).
  if (void* handle = dlopen(kSoname, RTLD_NOW | RTLD_NOLOAD)) {
    std::snprintf(path, size, "%s (already loaded)", kSoname);
    return handle;
  }
  // 2. pip wheels: .../nvidia/cuda_runtime/lib/libcudart.so.13 -> .../nvidia/cuda_cupti/lib.
  char directory[400];
  if (cudart_directory(directory, sizeof directory)) {
    std::snprintf(path, size, "%s/../../cuda_cupti/lib/%s", directory, kSoname);
    if (void* handle = try_open(path, RTLD_NOW | RTLD_LOCAL)) return handle;
    std::snprintf(path, size, "%s/%s", directory, kSoname);
    if (void* handle = try_open(path, RTLD_NOW | RTLD_LOCAL)) return handle;
  }
  // 3. the loader's search path.
  if (void* handle = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL)) {
    std::snprintf(path, size, "%s (library search path)", kSoname);
    return handle;
  }
  // 4. the toolkit.
  const char* homes[] = {std::getenv("CUDA_HOME"), "/usr/local/cuda"};
  const char* subdirs[] = {"lib64", "extras/CUPTI/lib64", "lib"};
  for (const char* home : homes) {
    if (home == nullptr || home[0] == '\0') continue;
    for (const char* subdir : subdirs) {
      std::snprintf(path, size, "%s/%s/%s", home, subdir, kSoname);
      if (void* handle = try_open(path, RTLD_NOW | RTLD_LOCAL)) return handle;
    }
  }
  path[0] = '\0';
  return nullptr;
}

template <typename F>
bool bind(void* handle, const char* name, F& out) {
  out = reinterpret_cast<F>(lookup(handle, name));
  return out != nullptr;
}

CuptiLibrary g_library;

const CuptiLibrary* load(const char** why) {
  CuptiLibrary& c = g_library;
  c.handle = open_cupti(c.path, sizeof c.path);
  if (c.handle == nullptr) {
    *why = "libcupti.so.13 not found (toolkit, pip nvidia/cuda_cupti, LD_LIBRARY_PATH)";
    return nullptr;
  }
  const bool bound = bind(c.handle, "cuptiSubscribe", c.subscribe) &&
                     bind(c.handle, "cuptiUnsubscribe", c.unsubscribe) &&
                     bind(c.handle, "cuptiEnableCallback", c.enable_callback) &&
                     bind(c.handle, "cuptiGetCallbackName", c.callback_name) &&
                     bind(c.handle, "cuptiActivityEnable", c.activity_enable) &&
                     bind(c.handle, "cuptiActivityDisable", c.activity_disable) &&
                     bind(c.handle, "cuptiActivityRegisterCallbacks", c.register_callbacks) &&
                     bind(c.handle, "cuptiActivityRegisterTimestampCallback", c.register_timestamp) &&
                     bind(c.handle, "cuptiActivityFlushAll", c.flush_all) &&
                     bind(c.handle, "cuptiActivityGetNextRecord", c.next_record) &&
                     bind(c.handle, "cuptiActivityGetNumDroppedRecords", c.dropped_records) &&
                     bind(c.handle, "cuptiGetGraphNodeId", c.graph_node_id) &&
                     bind(c.handle, "cuptiGetResultString", c.result_string);
  if (!bound) {
    *why = "libcupti.so.13 lacks an entry point the backend needs (older than CUPTI 13?)";
    return nullptr;
  }
  return &c;
}

}  // namespace

const CuptiLibrary* load_cupti(const char** why) noexcept {
  static const char* s_why = nullptr;
  static const CuptiLibrary* s_library = load(&s_why);
  if (s_library == nullptr && why != nullptr) *why = s_why;
  return s_library;
}

const char* cupti_result_name(const CuptiLibrary& cupti, CUptiResult result) noexcept {
  const char* name = nullptr;
  if (cupti.result_string == nullptr || cupti.result_string(result, &name) != CUPTI_SUCCESS || name == nullptr)
    return "CUPTI error";
  return name;
}

}  // namespace proflaunch::cuda
