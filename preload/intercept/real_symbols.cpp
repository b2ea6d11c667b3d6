#include "preload/intercept/real_symbols.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>

#include "preload/intercept/dlsym_interposer.h"

namespace proflaunch::intercept {
namespace {

constexpr int kMaxCandidates = 8;
constexpr size_t kMaxPath = 1024;

struct CandidateSearch {
  const char* prefix;
  uintptr_t own_base;
  int count;
  char paths[kMaxCandidates][kMaxPath];
};

uintptr_t own_base_address() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_base_address), &info) == 0) return 0;
  return reinterpret_cast<uintptr_t>(info.dli_fbase);
}

struct OwnImage {
  uintptr_t base;
  uintptr_t begin;
  uintptr_t end;
};

int find_own_image(struct dl_phdr_info* info, size_t, void* data) {
  auto* image = static_cast<OwnImage*>(data);
  if (info->dlpi_addr != image->base) return 0;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    const uintptr_t hi = lo + ph.p_memsz;
    if (image->begin == 0 || lo < image->begin) image->begin = lo;
    if (hi > image->end) image->end = hi;
  }
  return 1;
}

const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

// Runs under the loader's lock: only copy paths here, dlopen afterwards.
int collect_candidate(struct dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<CandidateSearch*>(data);
  if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') return 0;
  if (info->dlpi_addr == search->own_base) return 0;
  if (std::strncmp(base_name(info->dlpi_name), search->prefix, std::strlen(search->prefix)) != 0)
    return 0;
  const size_t len = std::strlen(info->dlpi_name);
  if (len >= kMaxPath) return 0;
  std::memcpy(search->paths[search->count], info->dlpi_name, len + 1);
  return ++search->count == kMaxCandidates ? 1 : 0;
}

void* search_loaded_objects(const char* name, const char* library_prefix) {
  // ~8 KiB: fine on any thread stack, and no allocation.
  CandidateSearch search;
  search.prefix = library_prefix;
  search.own_base = own_base_address();
  search.count = 0;
  dl_iterate_phdr(collect_candidate, &search);
  for (int i = 0; i < search.count; ++i) {
    void* handle = dlopen(search.paths[i], RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    void* symbol = real_dlsym()(handle, name);
    dlclose(handle);  // NOLOAD took a reference; the library stays loaded by its owner
    if (symbol != nullptr) return symbol;
  }
  return nullptr;
}

}  // namespace

bool is_own_address(const void* address) {
  static const OwnImage image = [] {
    OwnImage found{own_base_address(), 0, 0};
    dl_iterate_phdr(find_own_image, &found);
    return found;
  }();
  const auto a = reinterpret_cast<uintptr_t>(address);
  return a >= image.begin && a < image.end;
}

void* resolve_real_symbol(const char* name, const char* library_prefix) {
  // Called through a function pointer from here, libc's dlsym sees the shim
  // as the caller, so RTLD_NEXT means "after the shim".
  if (void* next = real_dlsym()(RTLD_NEXT, name)) return next;
  return search_loaded_objects(name, library_prefix);
}

bool real_symbol_exists(const char* name, const char* library_prefix) {
  return resolve_real_symbol(name, library_prefix) != nullptr;
}

}  // namespace proflaunch::intercept
