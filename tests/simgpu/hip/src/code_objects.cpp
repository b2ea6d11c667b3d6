#include "code_objects.h"

#include <elf.h>

#include <cstring>

namespace simhip {
namespace {

constexpr char kMagic[] = "__CLANG_OFFLOAD_BUNDLE__";
constexpr size_t kMagicBytes = sizeof kMagic - 1;
constexpr uint64_t kMaxEntries = 4096;

uint64_t read_u64(const uint8_t* p) {
  uint64_t value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

// "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-" -> "gfx90a:xnack-"; "" if not a HIP device entry.
std::string target_of(const std::string& id) {
  if (id.rfind("hip", 0) != 0) return "";
  const size_t split = id.find("--");
  return split == std::string::npos ? "" : id.substr(split + 2);
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

bool parse(const uint8_t* base, size_t bytes, bool bounded, std::vector<BundleEntry>& entries) {
  entries.clear();
  if (base == nullptr || (bounded && bytes < kMagicBytes + 8)) return false;
  if (std::memcmp(base, kMagic, kMagicBytes) != 0) return false;
  const uint64_t count = read_u64(base + kMagicBytes);
  if (count == 0 || count > kMaxEntries) return false;
  size_t at = kMagicBytes + 8;
  for (uint64_t i = 0; i < count; ++i) {
    if (bounded && bytes - at < 24) return false;
    const uint64_t offset = read_u64(base + at), size = read_u64(base + at + 8), id_bytes = read_u64(base + at + 16);
    at += 24;
    if (id_bytes > 1024 || (bounded && bytes - at < id_bytes)) return false;
    BundleEntry entry;
    entry.id.assign(reinterpret_cast<const char*>(base + at), id_bytes);
    at += id_bytes;
    if (bounded && (offset > bytes || size > bytes - offset)) return false;
    entry.data = base + offset;
    entry.bytes = size;
    entries.push_back(std::move(entry));
  }
  return true;
}

}  // namespace

bool parse_bundle(const void* data, std::vector<BundleEntry>& entries) {
  return parse(static_cast<const uint8_t*>(data), 0, false, entries);
}

bool parse_bundle(const void* data, size_t bytes, std::vector<BundleEntry>& entries) {
  return parse(static_cast<const uint8_t*>(data), bytes, true, entries);
}

bool target_matches(const std::string& entry_id, const std::string& device_target) {
  const std::string target = target_of(entry_id);
  if (target.empty()) return false;
  const std::vector<std::string> wanted = split(target, ':');
  const std::vector<std::string> device = split(device_target, ':');
  if (wanted[0] != device[0]) return false;
  for (size_t i = 1; i < wanted.size(); ++i) {
    const std::string& feature = wanted[i];
    if (feature.size() < 2) return false;
    bool found = false;
    for (size_t j = 1; j < device.size(); ++j) found = found || device[j] == feature;
    if (!found) return false;
  }
  return true;
}

bool code_object_kernels(const uint8_t* data, size_t bytes, std::vector<std::string>& kernels) {
  kernels.clear();
  if (data == nullptr || bytes < sizeof(Elf64_Ehdr)) return false;
  Elf64_Ehdr header;
  std::memcpy(&header, data, sizeof header);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64) return false;
  if (header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shoff > bytes ||
      uint64_t(header.e_shnum) * sizeof(Elf64_Shdr) > bytes - header.e_shoff) {
    return false;
  }
  auto section = [&](size_t index) {
    Elf64_Shdr s;
    std::memcpy(&s, data + header.e_shoff + index * sizeof s, sizeof s);
    return s;
  };
  for (size_t i = 0; i < header.e_shnum; ++i) {
    const Elf64_Shdr symbols = section(i);
    if (symbols.sh_type != SHT_SYMTAB && symbols.sh_type != SHT_DYNSYM) continue;
    if (symbols.sh_link >= header.e_shnum || symbols.sh_offset > bytes || symbols.sh_size > bytes - symbols.sh_offset)
      return false;
    const Elf64_Shdr strings = section(symbols.sh_link);
    if (strings.sh_offset > bytes || strings.sh_size > bytes - strings.sh_offset) return false;
    const char* names = reinterpret_cast<const char*>(data + strings.sh_offset);
    for (size_t at = 0; at + sizeof(Elf64_Sym) <= symbols.sh_size; at += sizeof(Elf64_Sym)) {
      Elf64_Sym symbol;
      std::memcpy(&symbol, data + symbols.sh_offset + at, sizeof symbol);
      if (symbol.st_name >= strings.sh_size) continue;
      const size_t room = strings.sh_size - symbol.st_name;
      const size_t length = strnlen(names + symbol.st_name, room);
      if (length == room) continue;
      const std::string name(names + symbol.st_name, length);
      if (name.size() > 3 && name.compare(name.size() - 3, 3, ".kd") == 0) {
        const std::string kernel = name.substr(0, name.size() - 3);
        bool known = false;
        for (const std::string& k : kernels) known = known || k == kernel;
        if (!known) kernels.push_back(kernel);
      }
    }
  }
  return true;
}

}  // namespace simhip
