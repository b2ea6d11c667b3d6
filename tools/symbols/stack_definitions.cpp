#include "tools/symbols/stack_definitions.h"

#include <algorithm>
#include <cstring>

namespace proflaunch::symbols {

using namespace format;

namespace {

template <typename Element>
std::vector<Element> tail_elements(const RecordView& record, size_t fixed_bytes, size_t count) {
  std::vector<Element> elements;
  if (count == 0 || record.bytes < fixed_bytes + count * sizeof(Element)) return elements;
  elements.resize(count);
  std::memcpy(elements.data(), record.data + fixed_bytes, count * sizeof(Element));
  return elements;
}

}  // namespace

void SectionStacks::add(const RecordView& record) {
  switch (record.record_kind()) {
    case RecordKind::kModuleDef: {
      const auto def = record.as<ModuleDefRecord>();
      if (record.bytes < sizeof def + def.build_id_bytes) return;
      if (def.flags & kModuleUnloaded) {
        std::erase_if(loaded_, [&](int32_t index) {
          const ModuleInfo& known = modules_[static_cast<size_t>(index)];
          return known.start == def.start && known.load_bias == def.load_bias &&
                 known.path_string == def.path_string;
        });
        return;
      }
      ModuleInfo module{def.path_string, def.load_bias, def.start, def.end, {}};
      module.build_id.assign(record.data + sizeof def, record.data + sizeof def + def.build_id_bytes);
      modules_.push_back(std::move(module));
      loaded_.push_back(static_cast<int32_t>(modules_.size() - 1));
      return;
    }
    case RecordKind::kNativeStackDef: {
      const auto def = record.as<NativeStackDefRecord>();
      const auto addresses = tail_elements<uint64_t>(record, sizeof def, def.frame_count);
      if (addresses.size() != def.frame_count) return;
      NativeStackInfo stack;
      stack.truncated = (def.flags & kStackTruncated) != 0;
      for (uint64_t address : addresses) stack.frames.push_back({address, module_at(address)});
      native_[def.id] = std::move(stack);
      return;
    }
    case RecordKind::kPythonStackDef: {
      const auto def = record.as<PythonStackDefRecord>();
      PythonStackInfo stack;
      stack.frames = tail_elements<PythonFrame>(record, sizeof def, def.frame_count);
      if (stack.frames.size() != def.frame_count) return;
      stack.truncated = (def.flags & kStackTruncated) != 0;
      python_[def.id] = std::move(stack);
      return;
    }
    case RecordKind::kSymbolDef: {
      const auto def = record.as<SymbolDefRecord>();
      auto& frames = symbols_[def.address];
      frames.push_back(def);
      std::stable_sort(frames.begin(), frames.end(),
                       [](const auto& a, const auto& b) { return a.inline_depth < b.inline_depth; });
      return;
    }
    default:
      return;
  }
}

const NativeStackInfo* SectionStacks::native(uint32_t id) const {
  auto found = native_.find(id);
  return found == native_.end() ? nullptr : &found->second;
}

const PythonStackInfo* SectionStacks::python(uint32_t id) const {
  auto found = python_.find(id);
  return found == python_.end() ? nullptr : &found->second;
}

std::span<const SymbolDefRecord> SectionStacks::embedded_symbols(uint64_t address) const {
  auto found = symbols_.find(address);
  if (found == symbols_.end()) return {};
  return found->second;
}

int32_t SectionStacks::module_at(uint64_t address) const {
  // Latest loaded first: of two overlapping entries the newer one is right.
  for (auto it = loaded_.rbegin(); it != loaded_.rend(); ++it) {
    const ModuleInfo& module = modules_[static_cast<size_t>(*it)];
    if (address >= module.start && address < module.end) return *it;
  }
  return -1;
}

int32_t SectionStacks::module_ever_at(uint64_t address) const {
  for (size_t i = modules_.size(); i-- > 0;) {
    const ModuleInfo& module = modules_[i];
    if (address >= module.start && address < module.end) return static_cast<int32_t>(i);
  }
  return -1;
}

}  // namespace proflaunch::symbols
