#include "tools/proftrace/interpret/host_function_names.h"

#include <cstdio>

#include "tools/proftrace/demangle.h"

namespace proflaunch::tools::interpret {

// The symbolizer and the embedded table treat an address as a return
// address and name address - 1 (the call instruction): a function's entry
// is asked for as entry + 1. The launcher stores host functions' symbols
// under the same key (launcher/symbol_table.cpp).
std::string HostFunctionNames::symbol_name(const SectionModel& section, uint64_t address) {
  const uint64_t as_return_address = address + 1;
  // Innermost first: the last frame is the function itself, not one inlined
  // into it at its first instruction.
  const auto embedded = section.stacks.embedded_symbols(as_return_address);
  if (!embedded.empty()) {
    const std::string_view function = section.string(embedded.back().function_string);
    if (!function.empty()) return std::string(function);
  }
  const int32_t index = section.stacks.module_ever_at(address);
  if (index < 0) return {};
  const symbols::ModuleInfo& module = section.stacks.modules()[static_cast<size_t>(index)];
  const std::string path(section.string(module.path_string));
  const symbols::SymbolFrames& frames = symbolizer_.symbolize(path, module, as_return_address);
  if (!frames.empty() && !frames.back().function.empty()) return frames.back().function;
  return {};
}

std::string HostFunctionNames::name(const SectionModel& section, uint64_t address, uint64_t at_ns) {
  const auto key = std::make_pair(section.section_id, address);
  auto found = symbols_.find(key);
  if (found == symbols_.end()) found = symbols_.emplace(key, symbol_name(section, address)).first;
  if (!found->second.empty()) return found->second;

  // What the shim saw (dladdr: an exported symbol, or object+offset).
  const std::string_view recorded = section.function_name(address, at_ns);
  if (!recorded.empty()) return demangle(recorded);
  const int32_t index = section.stacks.module_ever_at(address);
  if (index >= 0) {
    const symbols::ModuleInfo& module = section.stacks.modules()[static_cast<size_t>(index)];
    return symbols::module_offset_text(std::string(section.string(module.path_string)), module, address);
  }
  char text[48];
  std::snprintf(text, sizeof text, "host function 0x%llx", static_cast<unsigned long long>(address));
  return text;
}

}  // namespace proflaunch::tools::interpret
