#include "preload/stacks/frame_rules.h"

#include <link.h>

#include <cstring>

namespace proflaunch::stacks {
namespace {

struct ModuleSearch {
  uintptr_t pc;
  uintptr_t start = 0;
  uintptr_t end = 0;
  const uint8_t* eh_frame_hdr = nullptr;
  bool found = false;
};

// The PT_LOAD segment holding `pc` and the object's PT_GNU_EH_FRAME.
int find_segment(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<ModuleSearch*>(data);
  const uint8_t* hdr = nullptr;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    if (phdr.p_type == PT_GNU_EH_FRAME) hdr = reinterpret_cast<const uint8_t*>(info->dlpi_addr + phdr.p_vaddr);
    if (phdr.p_type != PT_LOAD) continue;
    const uintptr_t start = info->dlpi_addr + phdr.p_vaddr;
    if (search->pc >= start && search->pc - start < phdr.p_memsz) {
      search->start = start;
      search->end = start + phdr.p_memsz;
      search->found = true;
    }
  }
  if (!search->found) return 0;
  search->eh_frame_hdr = hdr;
  return 1;
}

uintptr_t g_left_out_start = 0;
uintptr_t g_left_out_end = 0;

}  // namespace

void FrameRuleCache::set_left_out_range(uintptr_t start, uintptr_t end) noexcept {
  g_left_out_start = start;
  g_left_out_end = end;
}

void FrameRuleCache::clear() noexcept { std::memset(static_cast<void*>(this), 0, sizeof *this); }

const FrameRuleCache::Module* FrameRuleCache::module_of(uintptr_t pc) noexcept {
  for (const Module& module : modules_)
    if (pc >= module.start && pc < module.end) return &module;
  ModuleSearch search{pc};
  dl_iterate_phdr(find_segment, &search);
  if (!search.found) return nullptr;
  Module& module = modules_[next_module_++ % kModules];
  module = Module{search.start, search.end, search.eh_frame_hdr};
  return &module;
}

const CachedFrameRule& FrameRuleCache::fill(CachedFrameRule* set, uintptr_t pc) noexcept {
  set[1] = set[0];  // the newest first
  CachedFrameRule& slot = set[0];
  const Module* module = module_of(pc);
  FrameRule rule = module != nullptr ? eh_frame_rule(module->eh_frame_hdr, pc) : FrameRule{FrameRuleKind::kUnsupported};
  if (rule.kind == FrameRuleKind::kStandard && (rule.rbp_offset < INT16_MIN || rule.rbp_offset > INT16_MAX))
    rule = FrameRule{FrameRuleKind::kUnsupported};
  slot.pc = pc;
  slot.kind = rule.kind;
  slot.cfa_offset = rule.cfa_offset;
  slot.rbp_offset = static_cast<int16_t>(rule.rbp_offset);
  slot.flags = static_cast<uint8_t>((rule.cfa_from_rbp ? CachedFrameRule::kCfaFromRbp : 0) |
                                    (rule.rbp_saved ? CachedFrameRule::kRbpSaved : 0) |
                                    (pc >= g_left_out_start && pc < g_left_out_end ? CachedFrameRule::kLeftOut : 0));
  return slot;
}

}  // namespace proflaunch::stacks
