#include "preload/sampling/signal_safe_modules.h"

#include <link.h>

#include <atomic>

namespace proflaunch::sampling {
namespace {

// Segments, not objects: a library has 2-4 executable or data PT_LOADs; a
// big PyTorch process has a few hundred objects.
constexpr uint32_t kMaxRanges = 4096;

struct RangeTable {
  std::atomic<uint32_t> sequence{0};  // odd while being written
  uint32_t count = 0;
  CodeRange ranges[kMaxRanges];
};

RangeTable g_tables[2];
std::atomic<uint32_t> g_current{0};
std::atomic<uint32_t> g_generation{1};
unsigned long long g_adds_seen = ~0ull;
unsigned long long g_subs_seen = ~0ull;

struct Fill {
  RangeTable* table;
  unsigned long long adds = 0, subs = 0;
};

int add_object(dl_phdr_info* info, size_t size, void* data) {
  auto* fill = static_cast<Fill*>(data);
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
    fill->adds = info->dlpi_adds;
    fill->subs = info->dlpi_subs;
  }
  const uint8_t* hdr = nullptr;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
      hdr = reinterpret_cast<const uint8_t*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    if (phdr.p_type != PT_LOAD || (phdr.p_flags & PF_X) == 0) continue;
    if (fill->table->count == kMaxRanges) return 1;
    const uintptr_t start = info->dlpi_addr + phdr.p_vaddr;
    fill->table->ranges[fill->table->count++] = CodeRange{start, start + phdr.p_memsz, hdr};
  }
  return 0;
}

int read_counters(dl_phdr_info* info, size_t size, void* data) {
  auto* fill = static_cast<Fill*>(data);
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
    fill->adds = info->dlpi_adds;
    fill->subs = info->dlpi_subs;
  }
  return 1;
}

}  // namespace

RangeLookup find_code_range(uintptr_t pc, CodeRange* out) noexcept {
  const RangeTable& table = g_tables[g_current.load(std::memory_order_acquire) & 1];
  const uint32_t before = table.sequence.load(std::memory_order_acquire);
  if (before & 1) return RangeLookup::kBusy;
  RangeLookup result = RangeLookup::kNotFound;
  const uint32_t count = table.count < kMaxRanges ? table.count : kMaxRanges;
  for (uint32_t i = 0; i < count; ++i) {
    const CodeRange& range = table.ranges[i];
    if (pc >= range.start && pc < range.end) {
      *out = range;
      result = RangeLookup::kFound;
      break;
    }
  }
  std::atomic_thread_fence(std::memory_order_acquire);
  if (table.sequence.load(std::memory_order_relaxed) != before) return RangeLookup::kBusy;
  return result;
}

uint32_t code_ranges_generation() noexcept { return g_generation.load(std::memory_order_acquire); }

void refresh_code_ranges(bool force) noexcept {
  Fill counters{nullptr};
  dl_iterate_phdr(read_counters, &counters);
  if (!force && counters.adds == g_adds_seen && counters.subs == g_subs_seen) return;
  const uint32_t next = (g_current.load(std::memory_order_relaxed) + 1) & 1;
  RangeTable& table = g_tables[next];
  table.sequence.fetch_add(1, std::memory_order_acq_rel);  // odd: a handler reading it gives up
  std::atomic_thread_fence(std::memory_order_release);
  table.count = 0;
  Fill fill{&table};
  dl_iterate_phdr(add_object, &fill);
  table.sequence.fetch_add(1, std::memory_order_release);
  g_current.store(next, std::memory_order_release);
  g_generation.fetch_add(1, std::memory_order_acq_rel);
  g_adds_seen = fill.adds;
  g_subs_seen = fill.subs;
}

}  // namespace proflaunch::sampling
