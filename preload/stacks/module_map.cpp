#include "preload/stacks/module_map.h"

#include <elf.h>
#include <link.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "formats/records.h"
#include "preload/record/definitions.h"

namespace proflaunch::stacks {
namespace {

using namespace format;

struct LoadCounters {
  unsigned long long adds = 0;
  unsigned long long subs = 0;
};

struct LoadedObject {
  std::string path;
  uintptr_t load_bias = 0;
  uintptr_t start = 0;
  uintptr_t end = 0;
  uint8_t build_id_bytes = 0;
  uint8_t build_id[64] = {};

  bool same_object(const LoadedObject& other) const {
    return load_bias == other.load_bias && start == other.start && path == other.path;
  }
};

// Written under the catalog mutex only; the counters are also read without
// it by modules_changed() (a stale read just means one extra rescan).
std::vector<LoadedObject>* g_known = nullptr;
std::atomic<unsigned long long> g_seen_adds{~0ull};
std::atomic<unsigned long long> g_seen_subs{~0ull};

int read_counters(dl_phdr_info* info, size_t size, void* data) {
  auto* counters = static_cast<LoadCounters*>(data);
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
    counters->adds = info->dlpi_adds;
    counters->subs = info->dlpi_subs;
  }
  return 1;  // the counters are global: the first object is enough
}

LoadCounters current_counters() {
  LoadCounters counters;
  dl_iterate_phdr(read_counters, &counters);
  return counters;
}

// The GNU build id from the object's PT_NOTE segments, in memory.
void read_build_id(const dl_phdr_info* info, LoadedObject& object) {
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    if (phdr.p_type != PT_NOTE) continue;
    const auto* note = reinterpret_cast<const uint8_t*>(info->dlpi_addr + phdr.p_vaddr);
    const uint8_t* end = note + phdr.p_filesz;
    while (note + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) header;
      std::memcpy(&header, note, sizeof header);
      const uint8_t* name = note + sizeof header;
      const uint8_t* desc = name + ((header.n_namesz + 3) & ~3u);
      const uint8_t* next = desc + ((header.n_descsz + 3) & ~3u);
      if (next > end) break;
      if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0 && header.n_descsz <= sizeof object.build_id) {
        object.build_id_bytes = static_cast<uint8_t>(header.n_descsz);
        std::memcpy(object.build_id, desc, header.n_descsz);
        return;
      }
      note = next;
    }
  }
}

std::string executable_path() {
  char path[PATH_MAX];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0) return "[executable]";
  return std::string(path, static_cast<size_t>(length));
}

struct ScanState {
  std::vector<LoadedObject>* objects;
  uintptr_t vdso;
  bool first = true;
};

// Runs with the loader's lock held: collects, defines nothing.
int collect_object(dl_phdr_info* info, size_t, void* data) {
  auto* scan = static_cast<ScanState*>(data);
  LoadedObject object;
  object.load_bias = info->dlpi_addr;
  object.start = UINTPTR_MAX;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    if (phdr.p_type != PT_LOAD) continue;
    const uintptr_t start = info->dlpi_addr + phdr.p_vaddr;
    object.start = std::min(object.start, start);
    object.end = std::max(object.end, start + phdr.p_memsz);
  }
  const bool first = scan->first;
  scan->first = false;
  if (object.start == UINTPTR_MAX) return 0;
  if (scan->vdso != 0 && object.start <= scan->vdso && scan->vdso < object.end)
    object.path = "[vdso]";
  else if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0')
    object.path = info->dlpi_name;
  else if (first)
    object.path = "";  // the executable: named after the walk (readlink is a syscall)
  else
    return 0;
  read_build_id(info, object);
  scan->objects->push_back(std::move(object));
  return 0;
}

void define_module(const LoadedObject& object, uint16_t flags) {
  uint8_t buffer[sizeof(ModuleDefRecord) + sizeof object.build_id];
  ModuleDefRecord record{};
  record.header = header_for<ModuleDefRecord>();
  record.header.bytes = static_cast<uint16_t>(sizeof record + object.build_id_bytes);
  record.path_string = intern_string(object.path);
  record.load_bias = object.load_bias;
  record.start = object.start;
  record.end = object.end;
  record.flags = flags;
  record.build_id_bytes = object.build_id_bytes;
  std::memcpy(buffer, &record, sizeof record);
  std::memcpy(buffer + sizeof record, object.build_id, object.build_id_bytes);
  define_record(buffer, record.header.bytes);
}

}  // namespace

bool modules_changed() noexcept {
  const LoadCounters counters = current_counters();
  return counters.adds != g_seen_adds.load(std::memory_order_relaxed) ||
         counters.subs != g_seen_subs.load(std::memory_order_relaxed);
}

bool refresh_modules_locked() noexcept {
  try {
    if (g_known == nullptr) g_known = new std::vector<LoadedObject>();
    const LoadCounters counters = current_counters();
    if (counters.adds == g_seen_adds.load(std::memory_order_relaxed) &&
        counters.subs == g_seen_subs.load(std::memory_order_relaxed))
      return false;
    std::vector<LoadedObject> current;
    ScanState scan{&current, static_cast<uintptr_t>(getauxval(AT_SYSINFO_EHDR))};
    dl_iterate_phdr(collect_object, &scan);
    for (LoadedObject& object : current)
      if (object.path.empty()) object.path = executable_path();

    bool loaded = false;
    for (const LoadedObject& known : *g_known) {
      const bool still_there = std::any_of(current.begin(), current.end(),
                                           [&](const auto& o) { return o.same_object(known); });
      if (!still_there) define_module(known, kModuleUnloaded);
    }
    for (const LoadedObject& object : current) {
      const bool known = std::any_of(g_known->begin(), g_known->end(),
                                     [&](const auto& o) { return o.same_object(object); });
      if (!known) {
        define_module(object, 0);
        loaded = true;
      }
    }
    g_known->swap(current);
    // A load between the counter read and the walk shows up in the walk
    // already, and is merely rescanned once more next time.
    g_seen_adds.store(counters.adds, std::memory_order_relaxed);
    g_seen_subs.store(counters.subs, std::memory_order_relaxed);
    return loaded;
  } catch (...) {
    return false;  // out of memory: the next refresh tries again
  }
}

}  // namespace proflaunch::stacks
