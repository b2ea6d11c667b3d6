// A tool's view of NVTX: the types, the callback ids and the export tables
// (nvtxDetail/nvtxTypes.h, which nvToolsExt.h includes), no implementation.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCuda.h>
#include <nvtx3/nvToolsExtCudaRt.h>
#include <nvtx3/nvToolsExtSync.h>

#include <atomic>
#include <cstring>
#include <cwchar>
#include <mutex>
#include <string>
#include <unordered_map>

#include "preload/base/guard.h"
#include "preload/control/capture_control.h"
#include "preload/cuda/api_call.h"
#include "preload/intercept/hook_registry.h"
#include "preload/nvtx/nvtx_hooks.h"
#include "preload/record/definitions.h"
#include "preload/record/emit.h"
#include "preload/state/runtime_state.h"

namespace proflaunch::nvtx {
namespace {

using format::NvtxEventType;

// API ids: the callback each NVTX entry point reaches.
#define PROFLAUNCH_NVTX_APIS(X)  \
  X(3000, nvtxMarkEx)            \
  X(3001, nvtxMarkA)             \
  X(3002, nvtxMarkW)             \
  X(3003, nvtxRangeStartEx)      \
  X(3004, nvtxRangeStartA)       \
  X(3005, nvtxRangeStartW)       \
  X(3006, nvtxRangeEnd)          \
  X(3007, nvtxRangePushEx)       \
  X(3008, nvtxRangePushA)        \
  X(3009, nvtxRangePushW)        \
  X(3010, nvtxRangePop)          \
  X(3011, nvtxDomainMarkEx)      \
  X(3012, nvtxDomainRangeStartEx) \
  X(3013, nvtxDomainRangeEnd)    \
  X(3014, nvtxDomainRangePushEx) \
  X(3015, nvtxDomainRangePop)    \
  X(3016, nvtxDomainSyncUserAcquireStart) \
  X(3017, nvtxDomainSyncUserAcquireFailed) \
  X(3018, nvtxDomainSyncUserAcquireSuccess) \
  X(3019, nvtxDomainSyncUserReleasing)

enum class Api : uint16_t {
#define PROFLAUNCH_NVTX_ENUM(id, name) name = id,
  PROFLAUNCH_NVTX_APIS(PROFLAUNCH_NVTX_ENUM)
#undef PROFLAUNCH_NVTX_ENUM
};

const hooks::ApiTableEntry kApis[] = {
#define PROFLAUNCH_NVTX_ENTRY(id, name) {id, #name, false},
    PROFLAUNCH_NVTX_APIS(PROFLAUNCH_NVTX_ENTRY)
#undef PROFLAUNCH_NVTX_ENTRY
};

bool recording() noexcept { return runtime::recording() && (trace_domains() & kTraceNvtx) != 0; }
// Between capture windows: definitions are kept (a later window's ranges use
// them), and the range that opens a window (--capture-range=nvtx:..., NVTX
// steps) is watched for.
bool active() noexcept { return runtime::active() && (trace_domains() & kTraceNvtx) != 0; }
bool watching() noexcept { return capture::armed(capture::kArmedNvtx) && runtime::active(); }

// ---- handles the shim gives out

std::atomic<uint64_t> g_next_range{1};
std::atomic<uint64_t> g_next_handle{1};

uint64_t new_handle() noexcept { return g_next_handle.fetch_add(1, std::memory_order_relaxed); }

// ---- push/pop depth per thread and domain (what push and pop return)

constexpr int kDepthSlots = 16;
struct DepthSlot {
  uint64_t domain;
  int depth;
  bool used;
};
thread_local DepthSlot tl_depths[kDepthSlots];

int& depth_of(uint64_t domain) noexcept {
  static thread_local int overflow = 0;  // domains beyond the table share one depth
  for (DepthSlot& slot : tl_depths) {
    if (slot.used && slot.domain == domain) return slot.depth;
  }
  for (DepthSlot& slot : tl_depths) {
    if (!slot.used) {
      slot = DepthSlot{domain, 0, true};
      return slot.depth;
    }
  }
  return overflow;
}

// ---- strings

constexpr uint32_t kMaxMessageBytes = kMaxEventRecordBytes - sizeof(format::NvtxEventRecord);

// UTF-8 of a wide string (UTF-32 on Linux), at most `limit` bytes, cut at a
// character boundary; `truncated` when it did not fit.
std::string utf8(const wchar_t* text, size_t limit, bool& truncated) {
  std::string out;
  truncated = false;
  if (text == nullptr) return out;
  for (; *text != 0; ++text) {
    char buffer[4];
    size_t n = 0;
    const uint32_t c = static_cast<uint32_t>(*text) > 0x10FFFF ? 0xFFFD : static_cast<uint32_t>(*text);
    if (c < 0x80) {
      buffer[n++] = static_cast<char>(c);
    } else if (c < 0x800) {
      buffer[n++] = static_cast<char>(0xC0 | (c >> 6));
      buffer[n++] = static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      buffer[n++] = static_cast<char>(0xE0 | (c >> 12));
      buffer[n++] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      buffer[n++] = static_cast<char>(0x80 | (c & 0x3F));
    } else {
      buffer[n++] = static_cast<char>(0xF0 | (c >> 18));
      buffer[n++] = static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      buffer[n++] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      buffer[n++] = static_cast<char>(0x80 | (c & 0x3F));
    }
    if (out.size() + n > limit) {
      truncated = true;
      break;
    }
    out.append(buffer, n);
  }
  return out;
}

// Bytes of an ASCII/UTF-8 message that fit, cut before a continuation byte.
size_t fitting_bytes(const char* text, size_t length, bool& truncated) {
  truncated = length > kMaxMessageBytes;
  if (!truncated) return length;
  size_t n = kMaxMessageBytes;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return n;
}

// What an event says, gathered before its record is written.
struct Event {
  NvtxEventType type;
  Api api;
  uint64_t domain = 0;
  uint64_t range_id = 0;
  int32_t result = 0;
  uint8_t flags = 0;
  uint8_t payload_type = 0;
  uint64_t payload = 0;
  uint32_t category = 0;
  uint32_t color = 0;
  uint8_t message_type = 0;
  uint64_t message_handle = 0;
  const char* text = nullptr;  // inline message bytes
  size_t text_bytes = 0;
};

void record(const Event& e, uint64_t begin) noexcept {
  auto* r = emit_with_tail<format::NvtxEventRecord>(static_cast<uint32_t>(e.text_bytes));
  if (r == nullptr) return;
  r->type = static_cast<uint8_t>(e.type);
  r->message_type = e.message_type;
  r->payload_type = e.payload_type;
  r->flags = e.flags;
  r->span.begin_ns = begin;
  r->span.end_ns = now_ticks();
  r->span.correlation_id = next_correlation_id();
  r->span.result = e.result;
  r->span.api = static_cast<uint16_t>(e.api);
  r->domain = e.domain;
  r->range_id = e.range_id;
  r->payload = e.payload;
  r->message_handle = e.message_handle;
  r->category = e.category;
  r->color = e.color;
  if (e.text_bytes != 0) std::memcpy(reinterpret_cast<char*>(r + 1), e.text, e.text_bytes);
  commit();
}

// Message, payload, category and colour of an attribute structure. A
// structure too small for a field leaves it unset.
void read_attributes(const nvtxEventAttributes_t* a, Event& e, std::string& wide_storage) noexcept {
  if (a == nullptr || a->size < offsetof(nvtxEventAttributes_t, message)) return;
  e.category = a->category;
  if (a->colorType == NVTX_COLOR_ARGB) {
    e.color = a->color;
    e.flags |= format::kNvtxColor;
  }
  if (a->payloadType >= NVTX_PAYLOAD_TYPE_UNSIGNED_INT64 && a->payloadType <= NVTX_PAYLOAD_TYPE_FLOAT) {
    e.payload_type = static_cast<uint8_t>(a->payloadType);
    std::memcpy(&e.payload, &a->payload, sizeof e.payload);
  }
  if (a->size < offsetof(nvtxEventAttributes_t, message) + sizeof(a->message)) return;
  bool truncated = false;
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      if (a->message.ascii != nullptr) {
        e.text = a->message.ascii;
        e.text_bytes = fitting_bytes(e.text, std::strlen(e.text), truncated);
        e.message_type = static_cast<uint8_t>(format::NvtxMessageType::kInline);
      }
      break;
    case NVTX_MESSAGE_TYPE_UNICODE:
      if (a->message.unicode != nullptr) {
        wide_storage = utf8(a->message.unicode, kMaxMessageBytes, truncated);
        e.text = wide_storage.data();
        e.text_bytes = wide_storage.size();
        e.message_type = static_cast<uint8_t>(format::NvtxMessageType::kInline);
      }
      break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
      e.message_handle = reinterpret_cast<uint64_t>(a->message.registered);
      e.message_type = static_cast<uint8_t>(format::NvtxMessageType::kRegistered);
      break;
    default: break;
  }
  if (truncated) e.flags |= format::kNvtxTruncated;
}

void set_ascii(Event& e, const char* message) noexcept {
  if (message == nullptr) return;
  bool truncated = false;
  e.text = message;
  e.text_bytes = fitting_bytes(message, std::strlen(message), truncated);
  e.message_type = static_cast<uint8_t>(format::NvtxMessageType::kInline);
  if (truncated) e.flags |= format::kNvtxTruncated;
}

void set_wide(Event& e, const wchar_t* message, std::string& storage) noexcept {
  if (message == nullptr) return;
  bool truncated = false;
  storage = utf8(message, kMaxMessageBytes, truncated);
  e.text = storage.data();
  e.text_bytes = storage.size();
  e.message_type = static_cast<uint8_t>(format::NvtxMessageType::kInline);
  if (truncated) e.flags |= format::kNvtxTruncated;
}

uint64_t domain_id(nvtxDomainHandle_t domain) noexcept { return reinterpret_cast<uint64_t>(domain); }

// ---- the operations every entry point shares. `fill` adds the message.

template <typename Fill>
void mark(Api api, uint64_t domain, Fill&& fill) noexcept {
  ReentrancyGuard guard;
  if (!guard.outermost() || !recording()) return;
  const uint64_t begin = now_ticks();
  Event e{NvtxEventType::kMark, api};
  e.domain = domain;
  std::string storage;
  fill(e, storage);
  record(e, begin);
}

// A range that opens a capture window (or begins a step) does so before its
// own record, so that it is in the window.
// `key`: the range id of a start, the level of a push.
void watch_begin(const Event& e, uint64_t key, bool push) noexcept {
  const uint64_t registered =
      e.message_type == static_cast<uint8_t>(format::NvtxMessageType::kRegistered) ? e.message_handle : 0;
  if (capture::nvtx_matches(e.domain, std::string_view(e.text != nullptr ? e.text : "", e.text_bytes), registered))
    capture::nvtx_range_begun(e.domain, push ? capture::push_key(static_cast<int>(key)) : key, push);
}

template <typename Fill>
int push(Api api, uint64_t domain, Fill&& fill) noexcept {
  int& depth = depth_of(domain);
  const int level = depth++;
  ReentrancyGuard guard;
  if (!guard.outermost()) return level;
  const bool watch = watching();
  if (!watch && !recording()) return level;
  uint64_t begin = now_ticks();
  Event e{NvtxEventType::kPush, api};
  e.domain = domain;
  e.result = level;
  std::string storage;
  fill(e, storage);
  if (watch) {
    watch_begin(e, static_cast<uint64_t>(level), true);
    begin = now_ticks();  // a range that opened the window begins inside it
  }
  if (recording()) record(e, begin);
  return level;
}

// A range that closes a window does so after its own record.
int pop(Api api, uint64_t domain) noexcept {
  int& depth = depth_of(domain);
  const int level = depth > 0 ? --depth : -1;
  ReentrancyGuard guard;
  if (!guard.outermost()) return level;
  if (recording()) {
    const uint64_t begin = now_ticks();
    Event e{NvtxEventType::kPop, api};
    e.domain = domain;
    e.result = level;
    if (level < 0) e.flags |= format::kNvtxUnmatched;
    record(e, begin);
  }
  if (level >= 0 && capture::range_in_progress() && watching())
    capture::nvtx_range_ended(domain, capture::push_key(level), true);
  return level;
}

template <typename Fill>
nvtxRangeId_t start(Api api, uint64_t domain, Fill&& fill) noexcept {
  const uint64_t id = g_next_range.fetch_add(1, std::memory_order_relaxed);
  ReentrancyGuard guard;
  if (!guard.outermost()) return id;
  const bool watch = watching();
  if (!watch && !recording()) return id;
  uint64_t begin = now_ticks();
  Event e{NvtxEventType::kStart, api};
  e.domain = domain;
  e.range_id = id;
  std::string storage;
  fill(e, storage);
  if (watch) {
    watch_begin(e, id, false);
    begin = now_ticks();
  }
  if (recording()) record(e, begin);
  return id;
}

void end(Api api, uint64_t domain, nvtxRangeId_t id) noexcept {
  ReentrancyGuard guard;
  if (!guard.outermost()) return;
  if (recording()) {
    const uint64_t begin = now_ticks();
    Event e{NvtxEventType::kEnd, api};
    e.domain = domain;
    e.range_id = id;
    record(e, begin);
  }
  if (capture::range_in_progress() && watching()) capture::nvtx_range_ended(domain, id, false);
}

// A user synchronization object's event; the object's domain is kept with
// its handle (the SYNC calls pass only the handle).
std::mutex g_sync_mutex;
std::unordered_map<uint64_t, uint64_t>* g_sync_domains;

uint64_t sync_domain(uint64_t handle) noexcept {
  std::lock_guard lock(g_sync_mutex);
  if (g_sync_domains == nullptr) return 0;
  auto it = g_sync_domains->find(handle);
  return it == g_sync_domains->end() ? 0 : it->second;
}

void sync_event(Api api, NvtxEventType type, nvtxSyncUser_t handle) noexcept {
  ReentrancyGuard guard;
  if (!guard.outermost() || !recording()) return;
  const uint64_t begin = now_ticks();
  Event e{type, api};
  e.range_id = reinterpret_cast<uint64_t>(handle);
  e.domain = sync_domain(e.range_id);
  record(e, begin);
}

// ---- names (definitions)

void define_name(format::NvtxNameKind kind, uint64_t domain, uint64_t handle, std::string_view name) noexcept {
  if (!active()) return;
  format::NvtxNameDefRecord r{};
  r.header = format::header_for<format::NvtxNameDefRecord>();
  r.kind = static_cast<uint8_t>(kind);
  r.domain = domain;
  r.handle = handle;
  r.name_string = intern_string(name);
  define_record(&r, sizeof r);
}

std::string wide_name(const wchar_t* name) {
  bool truncated = false;
  return utf8(name, format::kMaxStringBytes, truncated);
}

// ---- the callbacks

void NVTX_API MarkEx(const nvtxEventAttributes_t* a) {
  mark(Api::nvtxMarkEx, 0, [&](Event& e, std::string& s) { read_attributes(a, e, s); });
}
void NVTX_API MarkA(const char* m) { mark(Api::nvtxMarkA, 0, [&](Event& e, std::string&) { set_ascii(e, m); }); }
void NVTX_API MarkW(const wchar_t* m) {
  mark(Api::nvtxMarkW, 0, [&](Event& e, std::string& s) { set_wide(e, m, s); });
}
nvtxRangeId_t NVTX_API RangeStartEx(const nvtxEventAttributes_t* a) {
  return start(Api::nvtxRangeStartEx, 0, [&](Event& e, std::string& s) { read_attributes(a, e, s); });
}
nvtxRangeId_t NVTX_API RangeStartA(const char* m) {
  return start(Api::nvtxRangeStartA, 0, [&](Event& e, std::string&) { set_ascii(e, m); });
}
nvtxRangeId_t NVTX_API RangeStartW(const wchar_t* m) {
  return start(Api::nvtxRangeStartW, 0, [&](Event& e, std::string& s) { set_wide(e, m, s); });
}
void NVTX_API RangeEnd(nvtxRangeId_t id) { end(Api::nvtxRangeEnd, 0, id); }
int NVTX_API RangePushEx(const nvtxEventAttributes_t* a) {
  return push(Api::nvtxRangePushEx, 0, [&](Event& e, std::string& s) { read_attributes(a, e, s); });
}
int NVTX_API RangePushA(const char* m) {
  return push(Api::nvtxRangePushA, 0, [&](Event& e, std::string&) { set_ascii(e, m); });
}
int NVTX_API RangePushW(const wchar_t* m) {
  return push(Api::nvtxRangePushW, 0, [&](Event& e, std::string& s) { set_wide(e, m, s); });
}
int NVTX_API RangePop() { return pop(Api::nvtxRangePop, 0); }
void NVTX_API NameCategoryA(uint32_t category, const char* name) {
  if (name != nullptr) define_name(format::NvtxNameKind::kCategory, 0, category, name);
}
void NVTX_API NameCategoryW(uint32_t category, const wchar_t* name) {
  if (name != nullptr) define_name(format::NvtxNameKind::kCategory, 0, category, wide_name(name));
}
void NVTX_API NameOsThreadA(uint32_t tid, const char* name) {
  if (name == nullptr) return;
  define_name(format::NvtxNameKind::kOsThread, 0, tid, name);
}
void NVTX_API NameOsThreadW(uint32_t tid, const wchar_t* name) {
  if (name == nullptr) return;
  define_name(format::NvtxNameKind::kOsThread, 0, tid, wide_name(name));
}

void NVTX_API DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  mark(Api::nvtxDomainMarkEx, domain_id(d), [&](Event& e, std::string& s) { read_attributes(a, e, s); });
}
nvtxRangeId_t NVTX_API DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return start(Api::nvtxDomainRangeStartEx, domain_id(d), [&](Event& e, std::string& s) { read_attributes(a, e, s); });
}
void NVTX_API DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id) { end(Api::nvtxDomainRangeEnd, domain_id(d), id); }
int NVTX_API DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return push(Api::nvtxDomainRangePushEx, domain_id(d), [&](Event& e, std::string& s) { read_attributes(a, e, s); });
}
int NVTX_API DomainRangePop(nvtxDomainHandle_t d) { return pop(Api::nvtxDomainRangePop, domain_id(d)); }
nvtxResourceHandle_t NVTX_API DomainResourceCreate(nvtxDomainHandle_t, nvtxResourceAttributes_t*) {
  return reinterpret_cast<nvtxResourceHandle_t>(new_handle());
}
void NVTX_API DomainResourceDestroy(nvtxResourceHandle_t) {}
void NVTX_API DomainNameCategoryA(nvtxDomainHandle_t d, uint32_t category, const char* name) {
  if (name != nullptr) define_name(format::NvtxNameKind::kCategory, domain_id(d), category, name);
}
void NVTX_API DomainNameCategoryW(nvtxDomainHandle_t d, uint32_t category, const wchar_t* name) {
  if (name != nullptr) define_name(format::NvtxNameKind::kCategory, domain_id(d), category, wide_name(name));
}
nvtxStringHandle_t NVTX_API DomainRegisterStringA(nvtxDomainHandle_t d, const char* text) {
  const uint64_t handle = new_handle();
  if (text != nullptr) {
    define_name(format::NvtxNameKind::kRegisteredString, domain_id(d), handle, text);
    capture::nvtx_string_registered(domain_id(d), handle, text);
  }
  return reinterpret_cast<nvtxStringHandle_t>(handle);
}
nvtxStringHandle_t NVTX_API DomainRegisterStringW(nvtxDomainHandle_t d, const wchar_t* text) {
  const uint64_t handle = new_handle();
  if (text != nullptr) {
    const std::string name = wide_name(text);
    define_name(format::NvtxNameKind::kRegisteredString, domain_id(d), handle, name);
    capture::nvtx_string_registered(domain_id(d), handle, name);
  }
  return reinterpret_cast<nvtxStringHandle_t>(handle);
}
nvtxDomainHandle_t define_domain(std::string_view name) {
  const uint64_t handle = new_handle();
  capture::nvtx_domain_created(handle, name);
  if (active()) {
    format::NvtxDomainDefRecord r{};
    r.header = format::header_for<format::NvtxDomainDefRecord>();
    r.domain = handle;
    r.name_string = intern_string(name);
    define_record(&r, sizeof r);
  }
  return reinterpret_cast<nvtxDomainHandle_t>(handle);
}
nvtxDomainHandle_t NVTX_API DomainCreateA(const char* name) { return define_domain(name != nullptr ? name : ""); }
nvtxDomainHandle_t NVTX_API DomainCreateW(const wchar_t* name) {
  return define_domain(name != nullptr ? wide_name(name) : std::string());
}
void NVTX_API DomainDestroy(nvtxDomainHandle_t) {}

nvtxSyncUser_t NVTX_API SyncUserCreate(nvtxDomainHandle_t d, const nvtxSyncUserAttributes_t* a) {
  const uint64_t handle = new_handle();
  try {
    std::lock_guard lock(g_sync_mutex);
    if (g_sync_domains == nullptr) g_sync_domains = new std::unordered_map<uint64_t, uint64_t>();
    (*g_sync_domains)[handle] = domain_id(d);
  } catch (...) {
  }
  if (a != nullptr && a->size >= offsetof(nvtxSyncUserAttributes_t, message) + sizeof(a->message)) {
    if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii != nullptr)
      define_name(format::NvtxNameKind::kSyncUser, domain_id(d), handle, a->message.ascii);
    else if (a->messageType == NVTX_MESSAGE_TYPE_UNICODE && a->message.unicode != nullptr)
      define_name(format::NvtxNameKind::kSyncUser, domain_id(d), handle, wide_name(a->message.unicode));
  }
  return reinterpret_cast<nvtxSyncUser_t>(handle);
}
void NVTX_API SyncUserDestroy(nvtxSyncUser_t handle) {
  std::lock_guard lock(g_sync_mutex);
  if (g_sync_domains != nullptr) g_sync_domains->erase(reinterpret_cast<uint64_t>(handle));
}
void NVTX_API SyncUserAcquireStart(nvtxSyncUser_t h) {
  sync_event(Api::nvtxDomainSyncUserAcquireStart, NvtxEventType::kSyncAcquireStart, h);
}
void NVTX_API SyncUserAcquireFailed(nvtxSyncUser_t h) {
  sync_event(Api::nvtxDomainSyncUserAcquireFailed, NvtxEventType::kSyncAcquireFailed, h);
}
void NVTX_API SyncUserAcquireSuccess(nvtxSyncUser_t h) {
  sync_event(Api::nvtxDomainSyncUserAcquireSuccess, NvtxEventType::kSyncAcquireSuccess, h);
}
void NVTX_API SyncUserReleasing(nvtxSyncUser_t h) {
  sync_event(Api::nvtxDomainSyncUserReleasing, NvtxEventType::kSyncReleasing, h);
}
void NVTX_API Initialize(const void*) {}

// CUDA driver and runtime names: streams as records carry them.
void NVTX_API NameCuDeviceA(CUdevice device, const char* name) {
  if (name != nullptr) define_name(format::NvtxNameKind::kCudaDevice, 0, static_cast<uint64_t>(device), name);
}
void NVTX_API NameCuDeviceW(CUdevice device, const wchar_t* name) {
  if (name != nullptr) define_name(format::NvtxNameKind::kCudaDevice, 0, static_cast<uint64_t>(device), wide_name(name));
}
void NVTX_API NameCuContextA(CUcontext context, const char* name) {
  if (name != nullptr) define_name(format::NvtxNameKind::kCudaContext, 0, reinterpret_cast<uint64_t>(context), name);
}
void NVTX_API NameCuContextW(CUcontext context, const wchar_t* name) {
  if (name != nullptr)
    define_name(format::NvtxNameKind::kCudaContext, 0, reinterpret_cast<uint64_t>(context), wide_name(name));
}
void NVTX_API NameCuStreamA(CUstream stream, const char* name) {
  if (name != nullptr) define_name(format::NvtxNameKind::kCudaStream, 0, cuda::stream_handle(stream, false), name);
}
void NVTX_API NameCuStreamW(CUstream stream, const wchar_t* name) {
  if (name != nullptr)
    define_name(format::NvtxNameKind::kCudaStream, 0, cuda::stream_handle(stream, false), wide_name(name));
}
void NVTX_API NameCuEventA(CUevent event, const char* name) {
  if (name != nullptr) define_name(format::NvtxNameKind::kCudaEvent, 0, reinterpret_cast<uint64_t>(event), name);
}
void NVTX_API NameCuEventW(CUevent event, const wchar_t* name) {
  if (name != nullptr)
    define_name(format::NvtxNameKind::kCudaEvent, 0, reinterpret_cast<uint64_t>(event), wide_name(name));
}
void NVTX_API NameCudaDeviceA(int device, const char* name) { NameCuDeviceA(device, name); }
void NVTX_API NameCudaDeviceW(int device, const wchar_t* name) { NameCuDeviceW(device, name); }
void NVTX_API NameCudaStreamA(cudaStream_t stream, const char* name) {
  NameCuStreamA(reinterpret_cast<CUstream>(stream), name);
}
void NVTX_API NameCudaStreamW(cudaStream_t stream, const wchar_t* name) {
  NameCuStreamW(reinterpret_cast<CUstream>(stream), name);
}
void NVTX_API NameCudaEventA(cudaEvent_t event, const char* name) { NameCuEventA(reinterpret_cast<CUevent>(event), name); }
void NVTX_API NameCudaEventW(cudaEvent_t event, const wchar_t* name) {
  NameCuEventW(reinterpret_cast<CUevent>(event), name);
}

// ---- filling a module's tables

struct Slot {
  unsigned id;
  NvtxFunctionPointer function;
};

template <typename F>
NvtxFunctionPointer fp(F* function) {
  return reinterpret_cast<NvtxFunctionPointer>(function);
}

void fill(const NvtxExportTableCallbacks* callbacks, NvtxCallbackModule module, const Slot* slots, size_t count) {
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (callbacks->GetModuleFunctionTable(module, &table, &size) == 0 || table == nullptr) return;
  for (size_t i = 0; i < count; ++i) {
    if (slots[i].id < size && table[slots[i].id] != nullptr) *table[slots[i].id] = slots[i].function;
  }
}

}  // namespace

hooks::ApiTable nvtx_apis() {
  return {kApis, std::size(kApis), format::ApiDomain::kAnnotation, format::Vendor::kNvidia};
}

}  // namespace proflaunch::nvtx

using namespace proflaunch::nvtx;

// Called by each module's NVTX on its first NVTX call: fills that module's
// tables. Stateless, so any number of calls, from any thread, is safe.
// Returns nonzero on success, as NVTX expects.
extern "C" PROFLAUNCH_EXPORT int InitializeInjectionNvtx2(const void* (*getExportTable)(uint32_t)) {
  if (getExportTable == nullptr) return 0;
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(getExportTable(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) ||
      callbacks->GetModuleFunctionTable == nullptr)
    return 0;
  static const Slot kCore[] = {
      {NVTX_CBID_CORE_MarkEx, fp(MarkEx)},
      {NVTX_CBID_CORE_MarkA, fp(MarkA)},
      {NVTX_CBID_CORE_MarkW, fp(MarkW)},
      {NVTX_CBID_CORE_RangeStartEx, fp(RangeStartEx)},
      {NVTX_CBID_CORE_RangeStartA, fp(RangeStartA)},
      {NVTX_CBID_CORE_RangeStartW, fp(RangeStartW)},
      {NVTX_CBID_CORE_RangeEnd, fp(RangeEnd)},
      {NVTX_CBID_CORE_RangePushEx, fp(RangePushEx)},
      {NVTX_CBID_CORE_RangePushA, fp(RangePushA)},
      {NVTX_CBID_CORE_RangePushW, fp(RangePushW)},
      {NVTX_CBID_CORE_RangePop, fp(RangePop)},
      {NVTX_CBID_CORE_NameCategoryA, fp(NameCategoryA)},
      {NVTX_CBID_CORE_NameCategoryW, fp(NameCategoryW)},
      {NVTX_CBID_CORE_NameOsThreadA, fp(NameOsThreadA)},
      {NVTX_CBID_CORE_NameOsThreadW, fp(NameOsThreadW)},
  };
  static const Slot kCore2[] = {
      {NVTX_CBID_CORE2_DomainMarkEx, fp(DomainMarkEx)},
      {NVTX_CBID_CORE2_DomainRangeStartEx, fp(DomainRangeStartEx)},
      {NVTX_CBID_CORE2_DomainRangeEnd, fp(DomainRangeEnd)},
      {NVTX_CBID_CORE2_DomainRangePushEx, fp(DomainRangePushEx)},
      {NVTX_CBID_CORE2_DomainRangePop, fp(DomainRangePop)},
      {NVTX_CBID_CORE2_DomainResourceCreate, fp(DomainResourceCreate)},
      {NVTX_CBID_CORE2_DomainResourceDestroy, fp(DomainResourceDestroy)},
      {NVTX_CBID_CORE2_DomainNameCategoryA, fp(DomainNameCategoryA)},
      {NVTX_CBID_CORE2_DomainNameCategoryW, fp(DomainNameCategoryW)},
      {NVTX_CBID_CORE2_DomainRegisterStringA, fp(DomainRegisterStringA)},
      {NVTX_CBID_CORE2_DomainRegisterStringW, fp(DomainRegisterStringW)},
      {NVTX_CBID_CORE2_DomainCreateA, fp(DomainCreateA)},
      {NVTX_CBID_CORE2_DomainCreateW, fp(DomainCreateW)},
      {NVTX_CBID_CORE2_DomainDestroy, fp(DomainDestroy)},
      {NVTX_CBID_CORE2_Initialize, fp(Initialize)},
  };
  static const Slot kCuda[] = {
      {NVTX_CBID_CUDA_NameCuDeviceA, fp(NameCuDeviceA)},   {NVTX_CBID_CUDA_NameCuDeviceW, fp(NameCuDeviceW)},
      {NVTX_CBID_CUDA_NameCuContextA, fp(NameCuContextA)}, {NVTX_CBID_CUDA_NameCuContextW, fp(NameCuContextW)},
      {NVTX_CBID_CUDA_NameCuStreamA, fp(NameCuStreamA)},   {NVTX_CBID_CUDA_NameCuStreamW, fp(NameCuStreamW)},
      {NVTX_CBID_CUDA_NameCuEventA, fp(NameCuEventA)},     {NVTX_CBID_CUDA_NameCuEventW, fp(NameCuEventW)},
  };
  static const Slot kCudaRt[] = {
      {NVTX_CBID_CUDART_NameCudaDeviceA, fp(NameCudaDeviceA)}, {NVTX_CBID_CUDART_NameCudaDeviceW, fp(NameCudaDeviceW)},
      {NVTX_CBID_CUDART_NameCudaStreamA, fp(NameCudaStreamA)}, {NVTX_CBID_CUDART_NameCudaStreamW, fp(NameCudaStreamW)},
      {NVTX_CBID_CUDART_NameCudaEventA, fp(NameCudaEventA)},   {NVTX_CBID_CUDART_NameCudaEventW, fp(NameCudaEventW)},
  };
  fill(callbacks, NVTX_CB_MODULE_CORE, kCore, std::size(kCore));
  fill(callbacks, NVTX_CB_MODULE_CORE2, kCore2, std::size(kCore2));
  fill(callbacks, NVTX_CB_MODULE_CUDA, kCuda, std::size(kCuda));
  static const Slot kSync[] = {
      {NVTX_CBID_SYNC_DomainSyncUserCreate, fp(SyncUserCreate)},
      {NVTX_CBID_SYNC_DomainSyncUserDestroy, fp(SyncUserDestroy)},
      {NVTX_CBID_SYNC_DomainSyncUserAcquireStart, fp(SyncUserAcquireStart)},
      {NVTX_CBID_SYNC_DomainSyncUserAcquireFailed, fp(SyncUserAcquireFailed)},
      {NVTX_CBID_SYNC_DomainSyncUserAcquireSuccess, fp(SyncUserAcquireSuccess)},
      {NVTX_CBID_SYNC_DomainSyncUserReleasing, fp(SyncUserReleasing)},
  };
  fill(callbacks, NVTX_CB_MODULE_CUDART, kCudaRt, std::size(kCudaRt));
  fill(callbacks, NVTX_CB_MODULE_SYNC, kSync, std::size(kSync));
  return 1;
}
