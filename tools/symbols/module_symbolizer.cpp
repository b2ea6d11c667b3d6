#include "tools/symbols/module_symbolizer.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <cstdlib>
#include <cstring>

namespace proflaunch::symbols {
namespace {

char* g_debuginfo_path = nullptr;  // libdwfl's default search path

const Dwfl_Callbacks kOfflineCallbacks = {
    dwfl_build_id_find_elf,
    dwfl_standard_find_debuginfo,  // separate debug files: .gnu_debuglink, /usr/lib/debug/.build-id
    dwfl_offline_section_address,
    &g_debuginfo_path,
};

std::string scope_name(Dwarf_Die* scope) {
  Dwarf_Attribute attribute;
  // Follows DW_AT_abstract_origin and DW_AT_specification, where inlined
  // instances and out-of-class definitions keep their names.
  for (unsigned name_attribute : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    if (dwarf_attr_integrate(scope, name_attribute, &attribute) != nullptr) {
      if (const char* linkage = dwarf_formstring(&attribute)) return demangle_symbol(linkage);
    }
  }
  if (dwarf_attr_integrate(scope, DW_AT_name, &attribute) != nullptr) {
    if (const char* name = dwarf_formstring(&attribute)) return name;
  }
  return {};
}

// The file of a DW_AT_call_file index in the CU's file table.
std::string call_file(Dwarf_Die* cu, Dwarf_Die* inlined) {
  Dwarf_Attribute attribute;
  Dwarf_Word index = 0;
  if (dwarf_attr(inlined, DW_AT_call_file, &attribute) == nullptr ||
      dwarf_formudata(&attribute, &index) != 0)
    return {};
  Dwarf_Files* files = nullptr;
  size_t count = 0;
  if (dwarf_getsrcfiles(cu, &files, &count) != 0 || index >= count) return {};
  const char* name = dwarf_filesrc(files, index, nullptr, nullptr);
  return name != nullptr ? name : std::string();
}

uint32_t call_line(Dwarf_Die* inlined) {
  Dwarf_Attribute attribute;
  Dwarf_Word line = 0;
  if (dwarf_attr(inlined, DW_AT_call_line, &attribute) == nullptr ||
      dwarf_formudata(&attribute, &line) != 0)
    return 0;
  return static_cast<uint32_t>(line);
}

}  // namespace

std::string demangle_symbol(const char* name) {
  if (name == nullptr) return {};
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return name;
  std::string result(demangled);
  std::free(demangled);
  return result;
}

std::unique_ptr<ModuleSymbolizer> ModuleSymbolizer::open(const std::string& path,
                                                         std::span<const uint8_t> build_id,
                                                         std::string* why_not) {
  // libdwfl asks debuginfod servers for missing debug files when
  // DEBUGINFOD_URLS is set (distributions set it in login shells): network
  // round trips per library at the end of every run. Only on request.
  static const bool debuginfod_off = [] {
    const char* allow = std::getenv("PROFLAUNCH_DEBUGINFOD");
    if (allow == nullptr || std::strcmp(allow, "1") != 0) unsetenv("DEBUGINFOD_URLS");
    return true;
  }();
  (void)debuginfod_off;
  std::unique_ptr<ModuleSymbolizer> symbolizer(new ModuleSymbolizer());
  symbolizer->dwfl_ = dwfl_begin(&kOfflineCallbacks);
  if (symbolizer->dwfl_ == nullptr) {
    *why_not = "libdwfl: " + std::string(dwfl_errmsg(-1));
    return nullptr;
  }
  dwfl_report_begin(symbolizer->dwfl_);
  // Base 0: the module's addresses are the file's own virtual addresses.
  symbolizer->module_ = dwfl_report_elf(symbolizer->dwfl_, path.c_str(), path.c_str(), -1, 0, false);
  dwfl_report_end(symbolizer->dwfl_, nullptr, nullptr);
  if (symbolizer->module_ == nullptr) {
    *why_not = "cannot read " + path + ": " + dwfl_errmsg(-1);
    return nullptr;
  }
  if (!build_id.empty()) {
    const unsigned char* bits = nullptr;
    GElf_Addr vaddr = 0;
    const int length = dwfl_module_build_id(symbolizer->module_, &bits, &vaddr);
    if (length != static_cast<int>(build_id.size()) || std::memcmp(bits, build_id.data(), build_id.size()) != 0) {
      *why_not = path + " is not the file the program ran (its build id differs)";
      return nullptr;
    }
  }
  Dwarf_Addr bias = 0;
  symbolizer->has_debug_info_ = dwfl_module_getdwarf(symbolizer->module_, &bias) != nullptr;
  return symbolizer;
}

ModuleSymbolizer::~ModuleSymbolizer() {
  if (dwfl_ != nullptr) dwfl_end(dwfl_);
}

const SymbolFrames& ModuleSymbolizer::symbolize_return_address(uint64_t file_address) {
  auto found = cache_.find(file_address);
  if (found != cache_.end()) return found->second;
  // A return address points after the call: the call itself is one byte
  // before it (and may be on another line, or in another inlined function).
  const uint64_t pc = file_address > 0 ? file_address - 1 : 0;
  return cache_.emplace(file_address, lookup(pc)).first->second;
}

SymbolFrames ModuleSymbolizer::lookup(uint64_t pc) {
  SymbolFrames frames;
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = has_debug_info_ ? dwfl_module_addrdie(module_, pc, &bias) : nullptr;
  if (cu != nullptr) {
    // The line at pc belongs to the innermost scope; each inlined scope's
    // DW_AT_call_file/line is the line of the scope around it.
    std::string file;
    uint32_t line = 0;
    if (Dwfl_Line* source = dwfl_module_getsrc(module_, pc)) {
      int line_number = 0;
      if (const char* name = dwfl_lineinfo(source, nullptr, &line_number, nullptr, nullptr, nullptr)) {
        file = name;
        line = static_cast<uint32_t>(line_number > 0 ? line_number : 0);
      }
    }
    // dwarf_getscopes continues from an inlined instance into its abstract
    // definition's scopes; the concrete nesting (inlined instance inside the
    // function it was inlined into) is the DIE path of the innermost scope.
    Dwarf_Die* scopes = nullptr;
    int count = dwarf_getscopes(cu, pc - bias, &scopes);
    if (count > 0) {
      Dwarf_Die innermost = scopes[0];
      std::free(scopes);
      scopes = nullptr;
      count = dwarf_getscopes_die(&innermost, &scopes);
    }
    for (int i = 0; i < count; ++i) {
      const int tag = dwarf_tag(&scopes[i]);
      if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) continue;
      frames.push_back(SymbolFrame{scope_name(&scopes[i]), file, line, true});
      if (tag == DW_TAG_subprogram) break;
      file = call_file(cu, &scopes[i]);
      line = call_line(&scopes[i]);
    }
    // No function DIE holds pc (startup code without DWARF next to code
    // with it): the nearest line record belongs to other code, do not use it.
    std::free(scopes);
  }
  // The ELF symbol table: names the function when DWARF could not, and is
  // the better name for the outermost frame when DWARF had none.
  GElf_Off offset = 0;
  GElf_Sym symbol;
  const char* elf_name = dwfl_module_addrinfo(module_, pc, &offset, &symbol, nullptr, nullptr, nullptr);
  if (frames.empty()) {
    if (elf_name != nullptr) frames.push_back(SymbolFrame{demangle_symbol(elf_name), {}, 0, false});
  } else if (frames.back().function.empty() && elf_name != nullptr) {
    frames.back().function = demangle_symbol(elf_name);
  }
  return frames;
}

}  // namespace proflaunch::symbols
