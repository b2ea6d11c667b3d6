#include "preload/stacks/native_unwinder.h"

#include <dlfcn.h>
#include <link.h>

#include "preload/config.h"
#include "preload/intercept/dlsym_interposer.h"
#include "preload/intercept/libc_symbols.h"

namespace proflaunch::stacks {
namespace {

using UnwBacktraceFn = int (*)(void** buffer, int size);
using DlopenFn = void* (*)(const char* file, int mode);

UnwBacktraceFn g_unw_backtrace = nullptr;

struct AddressRange {
  uintptr_t start = 0;
  uintptr_t end = 0;
  bool contains(uintptr_t address) const { return address >= start && address < end; }
};
AddressRange g_shim;
AddressRange g_libunwind;

// Frames of the shim the walk passes and leaves out, beyond `depth`: the
// driver hook's own (capture, hook body, exported wrapper) and, for a runtime
// call, the runtime hook's: 4 to 6 in practice. Every frame walked costs
// ~6 ns, so the budget is kept small; a stack that had more is marked
// truncated at its root end.
constexpr uint32_t kSkippedFramesBudget = 8;

struct RangeSearch {
  uintptr_t inside;
  AddressRange found;
};

// The extent of the loaded object that contains `search->inside`.
int find_object(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<RangeSearch*>(data);
  AddressRange range{UINTPTR_MAX, 0};
  bool contains = false;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    if (phdr.p_type != PT_LOAD) continue;
    const uintptr_t start = info->dlpi_addr + phdr.p_vaddr;
    const uintptr_t end = start + phdr.p_memsz;
    if (start < range.start) range.start = start;
    if (end > range.end) range.end = end;
    if (search->inside >= start && search->inside < end) contains = true;
  }
  if (!contains) return 0;
  search->found = range;
  return 1;
}

AddressRange object_containing(const void* address) {
  RangeSearch search{reinterpret_cast<uintptr_t>(address), {}};
  dl_iterate_phdr(find_object, &search);
  return search.found;
}

}  // namespace

bool init_native_unwinder() noexcept {
  if (g_unw_backtrace != nullptr) return true;
  g_shim = object_containing(reinterpret_cast<const void*>(&init_native_unwinder));
  // libc's dlopen directly: the shim's exported dlopen is only for others.
  auto* real_dlopen = reinterpret_cast<DlopenFn>(intercept::find_libc_symbol("dlopen"));
  if (real_dlopen == nullptr) return false;
  void* handle = real_dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return false;
  auto* backtrace = reinterpret_cast<UnwBacktraceFn>(intercept::real_dlsym()(handle, "unw_backtrace"));
  if (backtrace == nullptr) return false;
  g_libunwind = object_containing(reinterpret_cast<const void*>(backtrace));
  g_unw_backtrace = backtrace;
  return true;
}

NativeStack capture_native_stack(uint64_t* frames, uint32_t depth) noexcept {
  NativeStack stack;
  if (g_unw_backtrace == nullptr) return stack;
  void* raw[kMaxStackDepth + kSkippedFramesBudget];
  if (depth > kMaxStackDepth) depth = kMaxStackDepth;
  const int requested = static_cast<int>(depth + kSkippedFramesBudget);
  const int captured = g_unw_backtrace(raw, requested);
  for (int i = 0; i < captured; ++i) {
    const auto address = reinterpret_cast<uintptr_t>(raw[i]);
    if (g_shim.contains(address) || g_libunwind.contains(address)) continue;
    if (stack.count == depth) {
      stack.truncated = true;
      break;
    }
    frames[stack.count++] = address;
  }
  // A full buffer may have cut the walk short of the outermost frame.
  if (captured == requested) stack.truncated = true;
  return stack;
}

}  // namespace proflaunch::stacks
