#include <link.h>

#include <atomic>
#include <iterator>

#include "preload/osrt/blocking_call.h"
#include "preload/osrt/osrt.h"

namespace proflaunch::osrt {
namespace {

const hooks::ApiTableEntry kOsrtApis[] = {
#define PROFLAUNCH_OSRT_API_ROW(id, call, symbol, object, errors, restart) {id, #call, false},
    PROFLAUNCH_OSRT_CALLS(PROFLAUNCH_OSRT_API_ROW)
#undef PROFLAUNCH_OSRT_API_ROW
};

// Address ranges of libraries whose waits are the profiler's own (CUPTI).
struct Range {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
};
constexpr size_t kMaxExcluded = 4;
Range g_excluded[kMaxExcluded];
std::atomic<size_t> g_excluded_count{0};

struct Search {
  uintptr_t address;
  uintptr_t begin = 0;
  uintptr_t end = 0;
  const char* name = nullptr;  // instead of an address: the object whose file name starts so
};

bool file_name_starts(const char* path, const char* prefix) {
  if (path == nullptr) return false;
  const char* base = path;
  for (const char* p = path; *p != '\0'; ++p)
    if (*p == '/') base = p + 1;
  for (; *prefix != '\0'; ++prefix, ++base)
    if (*base != *prefix) return false;
  return true;
}

int find_object(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<Search*>(data);
  uintptr_t low = UINTPTR_MAX, high = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info->dlpi_phdr[i];
    if (header.p_type != PT_LOAD) continue;
    const uintptr_t start = info->dlpi_addr + header.p_vaddr;
    if (start < low) low = start;
    if (start + header.p_memsz > high) high = start + header.p_memsz;
  }
  if (search->name != nullptr ? !file_name_starts(info->dlpi_name, search->name)
                              : (search->address < low || search->address >= high))
    return 0;
  search->begin = low;
  search->end = high;
  return 1;
}

}  // namespace

hooks::ApiTable osrt_apis() noexcept {
  return {kOsrtApis, std::size(kOsrtApis), format::ApiDomain::kOsRuntime, format::Vendor::kUnknown};
}

namespace {

void exclude(Search& search) noexcept {
  if (dl_iterate_phdr(find_object, &search) == 0) return;
  const size_t index = g_excluded_count.load(std::memory_order_relaxed);
  if (index >= kMaxExcluded) return;
  g_excluded[index].begin.store(search.begin, std::memory_order_relaxed);
  g_excluded[index].end.store(search.end, std::memory_order_relaxed);
  g_excluded_count.store(index + 1, std::memory_order_release);
}

}  // namespace

void start_osrt(const Config& config) noexcept {
  // ThreadSanitizer's interceptors of sleeps and waits call the next
  // definition (ours) with its own interceptors switched off: the locks the
  // cold path takes would be invisible to it and every record a false race.
  // Its waits are recorded by nobody.
  Search tsan{0};
  tsan.name = "libtsan.so";
  exclude(tsan);
  start_timing(runtime::active() ? config.osrt_threshold_ns : kOsrtOff);
}

void exclude_library_of(const void* address_in_library) noexcept {
  Search search{reinterpret_cast<uintptr_t>(address_in_library)};
  exclude(search);
}

bool excluded_caller(const void* caller) noexcept {
  const auto address = reinterpret_cast<uintptr_t>(caller);
  const size_t count = g_excluded_count.load(std::memory_order_acquire);
  for (size_t i = 0; i < count; ++i)
    if (address >= g_excluded[i].begin.load(std::memory_order_relaxed) &&
        address < g_excluded[i].end.load(std::memory_order_relaxed))
      return true;
  return false;
}

}  // namespace proflaunch::osrt
