#include "preload/stacks/stack_catalog.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>

#include "formats/records.h"
#include "preload/base/log.h"
#include "preload/config.h"
#include "preload/record/definitions.h"
#include "preload/stacks/frame_hash.h"
#include "preload/stacks/module_map.h"
#include "preload/stacks/python_frames.h"
#include "preload/stacks/stack_id_table.h"

namespace proflaunch::stacks {
namespace {

using namespace format;

// Distinct stacks a process can define: 48k native and 24k Python ones
// (tables are kept at most 3/4 full). A training job has hundreds to a few
// thousand; 1 MiB + 0.5 MiB of address space, touched as it fills.
constexpr size_t kNativeTableSlots = size_t{1} << 16;
constexpr size_t kPythonTableSlots = size_t{1} << 15;

constexpr uint64_t kNativeSeed = 0x6e61746976650001ull;
constexpr uint64_t kPythonSeed = 0x707974686f6e0001ull;
constexpr uint64_t kPythonContentSeed = 0x707974686f6e0002ull;

struct Catalog {
  std::mutex mutex;
  StackIdTable native;
  StackIdTable python;
  uint32_t next_native_id = 1;
  uint32_t next_python_id = 1;
  // Python stacks by content (strings and lines), so that two instruction
  // offsets on one line do not define the same stack twice.
  std::unordered_map<uint64_t, uint32_t> python_by_content;
  std::atomic<bool> full_warned{false};
};

// Never destroyed: hooks may run during static destruction.
Catalog& catalog() {
  alignas(Catalog) static unsigned char storage[sizeof(Catalog)];
  static Catalog* instance = new (storage) Catalog();
  return *instance;
}

void warn_full() {
  if (catalog().full_warned.exchange(true)) return;
  print_line("too many distinct call stacks: further new ones are not recorded");
}

uint64_t native_hash(const uint64_t* frames, const NativeStack& stack) {
  FrameHasher hasher(kNativeSeed);
  for (uint32_t i = 0; i < stack.count; ++i) hasher.add(frames[i]);
  hasher.add(uint64_t{stack.count} | uint64_t{stack.truncated} << 32);
  return hasher.finish();
}

uint64_t python_key_hash(const PythonFrameKey* keys, const PythonKeys& stack) {
  FrameHasher hasher(kPythonSeed);
  for (uint32_t i = 0; i < stack.count; ++i) {
    hasher.add(keys[i].code);
    hasher.add(static_cast<uint64_t>(static_cast<uint32_t>(keys[i].instruction)) |
               uint64_t{keys[i].flags} << 32);
  }
  hasher.add(uint64_t{stack.count} | uint64_t{stack.truncated} << 32);
  return hasher.finish();
}

__attribute__((noinline)) uint32_t define_native_stack(uint64_t hash, const uint64_t* frames,
                                                       const NativeStack& stack) noexcept {
  Catalog& c = catalog();
  bool loaded = false;
  uint32_t id = 0;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (uint32_t known = c.native.find(hash)) return known;
    if (c.native.full()) {
      warn_full();
      return 0;
    }
    // The modules of this stack's addresses go into the catalog first.
    loaded = refresh_modules_locked();
    uint8_t buffer[sizeof(NativeStackDefRecord) + kMaxStackDepth * sizeof(uint64_t)];
    NativeStackDefRecord record{};
    record.header = header_for<NativeStackDefRecord>();
    record.header.bytes = static_cast<uint16_t>(sizeof record + stack.count * sizeof(uint64_t));
    record.id = c.next_native_id;
    record.frame_count = static_cast<uint16_t>(stack.count);
    record.flags = stack.truncated ? kStackTruncated : 0;
    std::memcpy(buffer, &record, sizeof record);
    std::memcpy(buffer + sizeof record, frames, stack.count * sizeof(uint64_t));
    if (define_record(buffer, record.header.bytes)) {
      id = c.next_native_id++;
      c.native.insert(hash, id);
    }
  }
  if (loaded) init_python_frames();
  return id;
}

// Under the mutex: the id of a Python stack whose frames are resolved,
// defining it unless a stack with the same content exists. `key_hash` (0:
// none) is entered in the key table as well.
uint32_t define_resolved_python_stack_locked(Catalog& c, uint64_t key_hash, const ResolvedPythonFrame* resolved,
                                             const uint32_t* flags, const PythonKeys& stack) {
  if (c.python.full()) {
    warn_full();
    return 0;
  }
  PythonFrame frames[kMaxStackDepth];
  FrameHasher content(kPythonContentSeed);
  for (uint32_t i = 0; i < stack.count; ++i) {
    frames[i].file_string = intern_string(resolved[i].file);
    frames[i].function_string = intern_string(resolved[i].function);
    frames[i].line = resolved[i].line;
    frames[i].flags = flags[i];
    content.add(uint64_t{frames[i].file_string} << 32 | frames[i].function_string);
    content.add(static_cast<uint64_t>(static_cast<uint32_t>(frames[i].line)) | uint64_t{frames[i].flags} << 32);
  }
  content.add(uint64_t{stack.count} | uint64_t{stack.truncated} << 32);
  const uint64_t content_hash = content.finish();
  if (auto same = c.python_by_content.find(content_hash); same != c.python_by_content.end()) {
    if (key_hash != 0) c.python.insert(key_hash, same->second);
    return same->second;
  }
  uint8_t buffer[sizeof(PythonStackDefRecord) + kMaxStackDepth * sizeof(PythonFrame)];
  PythonStackDefRecord record{};
  record.header = header_for<PythonStackDefRecord>();
  record.header.bytes = static_cast<uint16_t>(sizeof record + stack.count * sizeof(PythonFrame));
  record.id = c.next_python_id;
  record.frame_count = static_cast<uint16_t>(stack.count);
  record.flags = stack.truncated ? kStackTruncated : 0;
  std::memcpy(buffer, &record, sizeof record);
  std::memcpy(buffer + sizeof record, frames, stack.count * sizeof(PythonFrame));
  if (!define_record(buffer, record.header.bytes)) return 0;
  const uint32_t id = c.next_python_id++;
  c.python_by_content.emplace(content_hash, id);
  if (key_hash != 0) c.python.insert(key_hash, id);
  return id;
}

__attribute__((noinline)) uint32_t define_python_stack(uint64_t hash, const PythonFrameKey* keys,
                                                       const PythonKeys& stack) noexcept {
  Catalog& c = catalog();
  try {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (uint32_t known = c.python.find(hash)) return known;
    ResolvedPythonFrame resolved[kMaxStackDepth];
    uint32_t flags[kMaxStackDepth];
    for (uint32_t i = 0; i < stack.count; ++i) {
      resolved[i] = resolve_python_frame(keys[i]);
      flags[i] = keys[i].flags;
    }
    return define_resolved_python_stack_locked(c, hash, resolved, flags, stack);
  } catch (...) {
    return 0;  // out of memory
  }
}

}  // namespace

bool init_stack_catalog() noexcept {
  Catalog& c = catalog();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.native.init(kNativeTableSlots) && c.python.init(kPythonTableSlots);
}

uint32_t native_stack_id(const uint64_t* frames, const NativeStack& stack) noexcept {
  const uint64_t hash = native_hash(frames, stack);
  if (uint32_t id = catalog().native.find(hash)) return id;
  return define_native_stack(hash, frames, stack);
}

uint32_t python_stack_id(const PythonFrameKey* keys, const PythonKeys& stack) noexcept {
  const uint64_t hash = python_key_hash(keys, stack);
  if (uint32_t id = catalog().python.find(hash)) return id;
  return define_python_stack(hash, keys, stack);
}

uint32_t python_stack_id_of_frames(const ResolvedPythonFrame* frames, const uint32_t* flags,
                                   const PythonKeys& stack) noexcept {
  if (stack.count > kMaxStackDepth) return 0;
  Catalog& c = catalog();
  try {
    std::lock_guard<std::mutex> lock(c.mutex);
    return define_resolved_python_stack_locked(c, 0, frames, flags, stack);
  } catch (...) {
    return 0;
  }
}

void refresh_modules() noexcept {
  if (!modules_changed()) return;
  bool loaded;
  {
    std::lock_guard<std::mutex> lock(catalog().mutex);
    loaded = refresh_modules_locked();
  }
  if (loaded) init_python_frames();
}

void catalog_lock_before_fork() noexcept { catalog().mutex.lock(); }

void catalog_unlock_after_fork() noexcept { catalog().mutex.unlock(); }

}  // namespace proflaunch::stacks
