#include "preload/record/definitions.h"

#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "formats/device_info.h"
#include "preload/base/clock.h"

namespace proflaunch {
namespace {

using namespace format;

struct DefinitionStore {
  std::mutex mutex;
  std::vector<uint8_t> catalog;
  size_t catalog_written_bytes = 0;
  std::vector<uint8_t> section_records;
  std::unordered_map<std::string, uint32_t> string_ids;
  std::unordered_map<uint64_t, uint32_t> function_names;  // handle -> name string
  std::unordered_map<uint64_t, uint64_t> function_since;  // handle -> since_ns of its current definition
  std::unordered_map<uint16_t, uint32_t> api_names;       // api -> name string
  uint32_t next_string_id = 1;
};

// Never destroyed: hooks may run during and after static destruction.
DefinitionStore& store() {
  alignas(DefinitionStore) static unsigned char storage[sizeof(DefinitionStore)];
  static DefinitionStore* instance = new (storage) DefinitionStore();
  return *instance;
}

template <typename Record>
void append_record(std::vector<uint8_t>& out, const Record& record) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(&record);
  out.insert(out.end(), bytes, bytes + sizeof record);
}

// Caller holds the mutex. Throws std::bad_alloc (caught by the public entry).
uint32_t intern_locked(DefinitionStore& s, std::string_view text) {
  if (text.size() > kMaxStringBytes) text = text.substr(0, kMaxStringBytes);
  auto found = s.string_ids.find(std::string(text));
  if (found != s.string_ids.end()) return found->second;
  const uint32_t id = s.next_string_id;
  StringDefRecord record{};
  record.header.kind = static_cast<uint16_t>(RecordKind::kStringDef);
  record.header.bytes = static_cast<uint16_t>(sizeof record + text.size());
  record.id = id;
  s.catalog.reserve(s.catalog.size() + record.header.bytes);
  append_record(s.catalog, record);
  s.catalog.insert(s.catalog.end(), text.begin(), text.end());
  s.string_ids.emplace(std::string(text), id);
  ++s.next_string_id;
  return id;
}

}  // namespace

uint32_t intern_string(std::string_view text) noexcept {
  DefinitionStore& s = store();
  try {
    std::lock_guard<std::mutex> lock(s.mutex);
    return intern_locked(s, text);
  } catch (...) {
    return 0;
  }
}

bool define_api(uint16_t api, std::string_view name, ApiDomain domain, Vendor vendor) noexcept {
  DefinitionStore& s = store();
  try {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto found = s.api_names.find(api);
    if (found != s.api_names.end()) {
      auto known = s.string_ids.find(std::string(name));
      return known != s.string_ids.end() && known->second == found->second;
    }
    const uint32_t name_string = intern_locked(s, name);
    ApiDefRecord record{};
    record.header = header_for<ApiDefRecord>();
    record.api = api;
    record.domain = static_cast<uint8_t>(domain);
    record.vendor = static_cast<uint8_t>(vendor);
    record.name_string = name_string;
    append_record(s.catalog, record);
    s.api_names.emplace(api, name_string);
    return true;
  } catch (...) {
    return false;
  }
}

namespace {

// Caller holds s.mutex.
void append_function_def_locked(DefinitionStore& s, uint64_t handle, uint32_t name_string, uint64_t since_ns,
                                const FunctionResources& resources) {
  FunctionDefRecord record{};
  record.header = header_for<FunctionDefRecord>();
  record.name_string = name_string;
  record.handle = handle;
  record.since_ns = since_ns;
  record.registers_per_thread = resources.registers_per_thread;
  record.static_shared_bytes = resources.static_shared_bytes;
  record.max_threads_per_block = resources.max_threads_per_block;
  record.local_bytes_per_thread = resources.local_bytes_per_thread;
  record.attributes_known = resources.known;
  append_record(s.catalog, record);
}

}  // namespace

bool define_function(uint64_t handle, std::string_view name, const FunctionResources& resources) noexcept {
  DefinitionStore& s = store();
  try {
    std::lock_guard<std::mutex> lock(s.mutex);
    const uint32_t name_string = intern_locked(s, name);
    auto [entry, inserted] = s.function_names.try_emplace(handle, name_string);
    if (!inserted && entry->second == name_string) return true;  // already known
    entry->second = name_string;
    const uint64_t since_ns = now_ns();
    s.function_since[handle] = since_ns;
    append_function_def_locked(s, handle, name_string, since_ns, resources);
    return true;
  } catch (...) {
    return false;
  }
}

bool define_function_resources(uint64_t handle, const FunctionResources& resources) noexcept {
  DefinitionStore& s = store();
  try {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto entry = s.function_names.find(handle);
    if (entry == s.function_names.end()) return false;
    // The same definition with what it uses: valid from the same moment, so
    // that readers (who keep the later of equal since_ns) take it for every
    // launch since, the first one included.
    append_function_def_locked(s, handle, entry->second, s.function_since[handle], resources);
    return true;
  } catch (...) {
    return false;
  }
}

bool function_defined_as(uint64_t handle, std::string_view name) noexcept {
  DefinitionStore& s = store();
  try {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto function = s.function_names.find(handle);
    if (function == s.function_names.end()) return false;
    if (name.size() > kMaxStringBytes) name = name.substr(0, kMaxStringBytes);
    auto known = s.string_ids.find(std::string(name));
    return known != s.string_ids.end() && known->second == function->second;
  } catch (...) {
    return false;
  }
}

bool define_device(const DeviceDescription& device) noexcept {
  DefinitionStore& s = store();
  try {
    std::lock_guard<std::mutex> lock(s.mutex);
    append_record(s.catalog, device_info_record(device, device.device, intern_locked(s, device.name)));
    return true;
  } catch (...) {
    return false;
  }
}

bool define_record(const void* record, size_t bytes) noexcept {
  if (bytes < sizeof(RecordHeader) || bytes > 65535) return false;
  DefinitionStore& s = store();
  try {
    std::lock_guard<std::mutex> lock(s.mutex);
    const auto* begin = static_cast<const uint8_t*>(record);
    s.catalog.insert(s.catalog.end(), begin, begin + bytes);
    return true;
  } catch (...) {
    return false;
  }
}

void define_thread(uint32_t tid, const char* name, uint64_t since_ns) noexcept {
  DefinitionStore& s = store();
  try {
    std::lock_guard<std::mutex> lock(s.mutex);
    ThreadInfoRecord record{};
    record.header = header_for<ThreadInfoRecord>();
    record.tid = tid;
    record.name_string = (name != nullptr && *name != '\0') ? intern_locked(s, name) : 0;
    record.since_ns = since_ns;
    append_record(s.section_records, record);
  } catch (...) {
  }
}

bool take_pending_definitions(std::vector<uint8_t>& out) noexcept {
  DefinitionStore& s = store();
  try {
    std::lock_guard<std::mutex> lock(s.mutex);
    out.reserve(out.size() + (s.catalog.size() - s.catalog_written_bytes) +
                s.section_records.size());
    out.insert(out.end(), s.catalog.begin() + static_cast<ptrdiff_t>(s.catalog_written_bytes),
               s.catalog.end());
    out.insert(out.end(), s.section_records.begin(), s.section_records.end());
    s.catalog_written_bytes = s.catalog.size();
    s.section_records.clear();
    return true;
  } catch (...) {
    return false;
  }
}

void definitions_begin_section() noexcept {
  DefinitionStore& s = store();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.catalog_written_bytes = 0;
  s.section_records.clear();
}

void definitions_lock_before_fork() noexcept { store().mutex.lock(); }

void definitions_unlock_after_fork() noexcept { store().mutex.unlock(); }

}  // namespace proflaunch
