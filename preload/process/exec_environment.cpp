#include "preload/process/exec_environment.h"

#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "preload/state/section.h"

extern char** environ;

namespace proflaunch {
namespace {

constexpr char kPreloadPrefix[] = "LD_PRELOAD=";
constexpr char kSettingsPrefix[] = "PROFLAUNCH_";
constexpr size_t kMaxSavedSettings = 32;

char g_library_path[kMaxPathBytes];
char g_preload_entry[2 * kMaxPathBytes + sizeof kPreloadPrefix];
char g_saved_settings_storage[16384];
const char* g_saved_settings[kMaxSavedSettings];
size_t g_saved_settings_count = 0;

bool starts_with(const char* text, const char* prefix) {
  return std::strncmp(text, prefix, std::strlen(prefix)) == 0;
}

bool is_exec_parent_entry(const char* entry) {
  const size_t length = std::strlen(kEnvExecParent);
  return std::strncmp(entry, kEnvExecParent, length) == 0 && entry[length] == '=';
}

bool is_parts_dir_entry(const char* entry) {
  const size_t length = std::strlen(kEnvPartsDir);
  return std::strncmp(entry, kEnvPartsDir, length) == 0 && entry[length] == '=';
}

// Whether the LD_PRELOAD list (entries separated by ':' or ' ') names us.
bool preload_list_has_library(const char* list) {
  const size_t length = std::strlen(g_library_path);
  for (const char* cursor = list; *cursor != '\0';) {
    const char* end = cursor;
    while (*end != '\0' && *end != ':' && *end != ' ') ++end;
    if (static_cast<size_t>(end - cursor) == length &&
        std::strncmp(cursor, g_library_path, length) == 0)
      return true;
    cursor = *end != '\0' ? end + 1 : end;
  }
  return false;
}

// A shim built with ASan or TSan (a test build) needs that runtime loaded
// before it in every process: the runtime's path, or null.
const char* own_sanitizer_runtime() noexcept {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#if defined(__SANITIZE_ADDRESS__)
  const char* const prefix = "libasan.so";
#else
  const char* const prefix = "libtsan.so";
#endif
  for (const link_map* object = _r_debug.r_map; object != nullptr; object = object->l_next) {
    if (object->l_name == nullptr) continue;
    const char* base = std::strrchr(object->l_name, '/');
    base = base != nullptr ? base + 1 : object->l_name;
    if (std::strncmp(base, prefix, std::strlen(prefix)) == 0) return object->l_name;
  }
#endif
  return nullptr;
}

}  // namespace

void save_exec_settings(const char* library_path) noexcept {
  if (library_path != nullptr && std::strlen(library_path) < sizeof g_library_path) {
    std::strcpy(g_library_path, library_path);
    std::strcpy(g_preload_entry, kPreloadPrefix);
    const char* runtime = own_sanitizer_runtime();
    if (runtime != nullptr && std::strlen(runtime) < kMaxPathBytes) {
      std::strcat(g_preload_entry, runtime);
      std::strcat(g_preload_entry, ":");
    }
    std::strcat(g_preload_entry, library_path);
  }
  size_t used = 0;
  g_saved_settings_count = 0;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    if (!starts_with(*entry, kSettingsPrefix) || is_exec_parent_entry(*entry)) continue;
    const size_t bytes = std::strlen(*entry) + 1;
    if (g_saved_settings_count == kMaxSavedSettings ||
        used + bytes > sizeof g_saved_settings_storage)
      break;
    std::memcpy(g_saved_settings_storage + used, *entry, bytes);
    g_saved_settings[g_saved_settings_count++] = g_saved_settings_storage + used;
    used += bytes;
  }
}

ExecEnvironment::~ExecEnvironment() {
  if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
}

char* const* ExecEnvironment::build(char* const* envp, uint32_t parent_pid,
                                    uint64_t parent_section) noexcept {
  size_t count = 0;
  if (envp != nullptr)
    while (envp[count] != nullptr) ++count;
  const size_t capacity = count + g_saved_settings_count + 3;
  if (capacity > kStackEntries) {
    mapping_bytes_ = capacity * sizeof(char*);
    mapping_ = mmap(nullptr, mapping_bytes_, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapping_ == MAP_FAILED) {
      mapping_ = nullptr;
      return envp;
    }
    entries_ = static_cast<const char**>(mapping_);
  }

  SectionIdentity parent;
  parent.pid = parent_pid;
  parent.id = parent_section;
  std::strcpy(marker_, kEnvExecParent);
  std::strcat(marker_, "=");
  format_exec_parent(parent, marker_ + std::strlen(marker_));

  size_t used = 0;
  bool has_settings = false;
  bool has_preload = false;
  for (size_t i = 0; i < count; ++i) {
    const char* entry = envp[i];
    if (is_exec_parent_entry(entry)) continue;
    if (is_parts_dir_entry(entry)) has_settings = true;
    if (g_library_path[0] != '\0' && starts_with(entry, kPreloadPrefix)) {
      has_preload = true;
      const char* list = entry + sizeof kPreloadPrefix - 1;
      if (!preload_list_has_library(list) &&
          std::strlen(g_preload_entry) + 1 + std::strlen(list) < sizeof preload_) {
        std::strcpy(preload_, g_preload_entry);
        if (*list != '\0') std::strcat(preload_, ":");
        std::strcat(preload_, list);
        entry = preload_;
      }
    }
    entries_[used++] = entry;
  }
  if (!has_settings)
    for (size_t i = 0; i < g_saved_settings_count; ++i) entries_[used++] = g_saved_settings[i];
  if (!has_preload && g_library_path[0] != '\0') entries_[used++] = g_preload_entry;
  entries_[used++] = marker_;
  entries_[used] = nullptr;
  return const_cast<char* const*>(entries_);
}

}  // namespace proflaunch
