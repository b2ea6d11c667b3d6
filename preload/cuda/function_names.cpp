#include "preload/cuda/function_names.h"

#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "preload/control/capture_control.h"
#include "preload/cuda/api_call.h"
#include "preload/cuda/capture_state.h"
#include "preload/cuda/current_context.h"
#include "preload/cuda/driver_services.h"
#include "preload/record/definitions.h"

namespace proflaunch::cuda {
namespace {

// Open addressing over handle values, never shrinking. 64 Ki slots (512 KiB
// of zero pages until touched) is far beyond the distinct kernels of real
// programs; when full, new handles are named on every launch instead.
constexpr size_t kNamedSlots = size_t{1} << 16;
std::atomic<uint64_t> g_named[kNamedSlots];

size_t slot_of(uint64_t handle) {
  return static_cast<size_t>((handle >> 4) * 0x9E3779B97F4A7C15ull >> 48) & (kNamedSlots - 1);
}

bool is_named(uint64_t handle) {
  for (size_t i = slot_of(handle), probes = 0; probes < 64; i = (i + 1) & (kNamedSlots - 1), ++probes) {
    const uint64_t v = g_named[i].load(std::memory_order_acquire);
    if (v == handle) return true;
    if (v == 0) return false;
  }
  return false;
}

void mark_named(uint64_t handle) {
  for (size_t i = slot_of(handle), probes = 0; probes < 64; i = (i + 1) & (kNamedSlots - 1), ++probes) {
    uint64_t expected = 0;
    if (g_named[i].compare_exchange_strong(expected, handle, std::memory_order_acq_rel) ||
        expected == handle)
      return;
  }
}

// Host stubs and runtime kernels: registration time only, small, under a lock.
constexpr size_t kMaxStubs = 8192;
struct StubName {
  const void* key;
  const char* name;  // the runtime keeps registration strings alive while registered
};
std::mutex g_stub_mutex;
StubName g_stubs[kMaxStubs];
size_t g_stub_count = 0;

const char* lookup_stub(const void* key) {
  for (size_t i = g_stub_count; i-- > 0;)
    if (g_stubs[i].key == key) return g_stubs[i].name;
  return nullptr;
}

void add_stub(const void* key, const char* name) {
  if (g_stub_count < kMaxStubs) g_stubs[g_stub_count++] = StubName{key, name};
}

const char* driver_name_of(uint64_t handle) {
  const DriverServices& driver = driver_services();
  const char* name = nullptr;
  if (driver.func_get_name != nullptr &&
      driver.func_get_name(&name, reinterpret_cast<CUfunction>(handle)) == CUDA_SUCCESS && name)
    return name;
  // cuLaunchKernel also accepts a CUkernel in place of a CUfunction.
  if (driver.kernel_get_name != nullptr &&
      driver.kernel_get_name(&name, reinterpret_cast<CUkernel>(handle)) == CUDA_SUCCESS && name)
    return name;
  return nullptr;
}

// What the driver says the function uses, asked once, where its FunctionDef
// is written (cold: once per handle). Only driver queries through the real
// entry points: they pass through no hook, leave the runtime's last error
// alone (that is cudart's state, and cudart is not called), and are not
// stream work, so a capture cannot absorb them; the thread is still put in
// relaxed mode while one may be open, so that no driver can take them for a
// prohibited call. A failed query leaves its field unknown.
FunctionResources resources_of(uint64_t handle) {
  FunctionResources resources;
  const DriverServices& driver = driver_services();
  if (driver.func_get_attribute == nullptr && driver.kernel_get_attribute == nullptr) return resources;
  // cuLaunchKernel and the naming hooks also hand out CUkernel handles; those
  // are asked per device with cuKernelGetAttribute when cuFuncGetAttribute
  // refuses them.
  CUcontext context = nullptr;
  const int device = current_device(&context);
  auto ask = [&](CUfunction_attribute which, uint32_t bit, uint32_t& field) {
    int value = 0;
    bool ok = driver.func_get_attribute != nullptr &&
              driver.func_get_attribute(&value, which, reinterpret_cast<CUfunction>(handle)) == CUDA_SUCCESS;
    if (!ok && device >= 0 && driver.kernel_get_attribute != nullptr)
      ok = driver.kernel_get_attribute(&value, which, reinterpret_cast<CUkernel>(handle), device) == CUDA_SUCCESS;
    if (!ok || value < 0) return;
    field = static_cast<uint32_t>(value);
    resources.known |= bit;
  };
  auto query_all = [&] {
    ask(CU_FUNC_ATTRIBUTE_NUM_REGS, format::kFunctionRegisters, resources.registers_per_thread);
    ask(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, format::kFunctionStaticShared, resources.static_shared_bytes);
    ask(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, format::kFunctionMaxThreadsPerBlock,
        resources.max_threads_per_block);
    ask(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, format::kFunctionLocalBytes, resources.local_bytes_per_thread);
  };
  if (captures_may_be_open()) {
    RelaxedCaptureScope relaxed;
    query_all();
  } else {
    query_all();
  }
  return resources;
}

void define_named(uint64_t handle, const char* name, const FunctionResources& resources) {
  if (handle == 0 || name == nullptr) return;
  define_function(handle, name, resources);
  mark_named(handle);
}

}  // namespace

void name_function(uint64_t handle, const char* name) noexcept {
  if (handle == 0 || name == nullptr) return;
  // A program that asks cuModuleGetFunction for the same kernel before every
  // launch must not pay for the attribute queries each time.
  if (function_defined_as(handle, name)) {
    mark_named(handle);
    return;
  }
  define_named(handle, name, resources_of(handle));
}

void ensure_function_named(uint64_t handle) noexcept {
  if (__builtin_expect(is_named(handle), 1)) return;
  const char* name = driver_name_of(handle);
  if (name == nullptr) {
    std::lock_guard<std::mutex> lock(g_stub_mutex);
    name = lookup_stub(reinterpret_cast<const void*>(tls_runtime_frame.kernel_name_hint));
  }
  if (name != nullptr) name_function(handle, name);
  else mark_named(handle);  // nameless: do not ask again on every launch
}

void name_kernel_function(uint64_t function, CUkernel kernel) noexcept {
  // Named like its kernel: ask the driver, which knows both.
  const char* name = nullptr;
  const DriverServices& driver = driver_services();
  if (driver.kernel_get_name != nullptr) driver.kernel_get_name(&name, kernel);
  if (name == nullptr && driver.func_get_name != nullptr) driver.func_get_name(&name, reinterpret_cast<CUfunction>(function));
  if (name != nullptr) name_function(function, name);
}

bool is_step_kernel(uint64_t handle) noexcept {
  // Few kernels are launched between two steps; a small table of verdicts
  // (handle | 1 when it is the step kernel), searched linearly, is enough.
  constexpr size_t kVerdicts = 1024;
  static std::atomic<uint64_t> verdicts[kVerdicts];
  static std::atomic<size_t> used{0};
  const size_t n = std::min(used.load(std::memory_order_acquire), kVerdicts);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t v = verdicts[i].load(std::memory_order_relaxed);
    if ((v & ~uint64_t{1}) == handle) return (v & 1) != 0;
  }
  const char* name = driver_name_of(handle);
  const bool match = capture::kernel_name_matches(name);
  const size_t slot = used.fetch_add(1, std::memory_order_acq_rel);
  if (slot < kVerdicts) verdicts[slot].store(handle | (match ? 1 : 0), std::memory_order_release);
  return match;
}

void ensure_host_function_named(uint64_t address) noexcept {
  if (__builtin_expect(is_named(address), 1)) return;
  // Cold: once per host function. Its symbol when the object exports one,
  // else object+offset (the converter symbolizes neither further).
  Dl_info info{};
  char name[512];
  if (dladdr(reinterpret_cast<void*>(address), &info) != 0 && info.dli_sname != nullptr &&
      info.dli_saddr == reinterpret_cast<void*>(address)) {
    define_named(address, info.dli_sname, {});
    return;
  }
  if (info.dli_fname != nullptr) {
    const char* base = std::strrchr(info.dli_fname, '/');
    std::snprintf(name, sizeof name, "%s+0x%llx", base != nullptr ? base + 1 : info.dli_fname,
                  static_cast<unsigned long long>(address - reinterpret_cast<uint64_t>(info.dli_fbase)));
  } else {
    std::snprintf(name, sizeof name, "host function 0x%llx", static_cast<unsigned long long>(address));
  }
  define_named(address, name, {});
}

void remember_host_stub(const void* host_function, const char* device_name) noexcept {
  std::lock_guard<std::mutex> lock(g_stub_mutex);
  add_stub(host_function, device_name);
}

void remember_runtime_kernel(const void* kernel, const void* host_function) noexcept {
  std::lock_guard<std::mutex> lock(g_stub_mutex);
  if (const char* name = lookup_stub(host_function)) add_stub(kernel, name);
}

const char* host_stub_name(const void* key) noexcept {
  std::lock_guard<std::mutex> lock(g_stub_mutex);
  return lookup_stub(key);
}

}  // namespace proflaunch::cuda
