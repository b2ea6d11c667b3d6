#include "tools/symbols/symbolizer.h"

#include <cstdio>

namespace proflaunch::symbols {

ModuleSymbolizer* Symbolizer::open(const std::string& path, const std::vector<uint8_t>& build_id) {
  auto key = std::make_pair(path, build_id);
  auto found = modules_.find(key);
  if (found != modules_.end()) return found->second.get();
  std::string why_not;
  std::unique_ptr<ModuleSymbolizer> module;
  // Pseudo-files ([vdso]) and empty names have nothing to open.
  if (!path.empty() && path.front() != '[') module = ModuleSymbolizer::open(path, build_id, &why_not);
  if (module == nullptr && !why_not.empty()) problems_.push_back(why_not);
  return modules_.emplace(std::move(key), std::move(module)).first->second.get();
}

const SymbolFrames& Symbolizer::symbolize(const std::string& path, const ModuleInfo& module,
                                          uint64_t address) {
  ModuleSymbolizer* symbolizer = open(path, module.build_id);
  if (symbolizer == nullptr) return nothing_;
  return symbolizer->symbolize_return_address(address - module.load_bias);
}

std::string module_offset_text(const std::string& path, const ModuleInfo& module, uint64_t address) {
  const size_t slash = path.rfind('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  char offset[32];
  std::snprintf(offset, sizeof offset, "+0x%llx",
                static_cast<unsigned long long>(address - module.load_bias));
  return (base.empty() ? std::string("?") : base) + offset;
}

}  // namespace proflaunch::symbols
