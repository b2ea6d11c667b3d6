#include "cubin.h"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <map>

namespace simgpu {
namespace {

constexpr unsigned kStoCudaEntry = 0x10;
constexpr unsigned kStoCudaManaged = 0x4;
constexpr unsigned kSttCudaObject = 13;  // variables in relocatable (-rdc) cubins

constexpr uint8_t kFormatSizedValue = 4;
constexpr uint8_t kAttrMaxThreads = 0x05;
constexpr uint8_t kAttrFrameSize = 0x11;
constexpr uint8_t kAttrKernelParamInfo = 0x17;
constexpr uint8_t kAttrParamBankSize = 0x19;
constexpr uint8_t kAttrRegisterCount = 0x2f;

template <class T>
T read(const uint8_t* at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  return value;
}

bool fits(uint64_t offset, uint64_t length, size_t bytes) { return offset <= bytes && length <= bytes - offset; }

struct Section {
  Elf64_Shdr header;
  std::string name;
};

// Calls `record(attribute, value_bytes, value_length)` for every record.
template <class Record>
void for_each_info_record(const uint8_t* data, size_t length, Record&& record) {
  size_t position = 0;
  while (position + 4 <= length) {
    const uint8_t format = data[position];
    const uint8_t attribute = data[position + 1];
    if (format == kFormatSizedValue) {
      const uint16_t value_length = read<uint16_t>(data + position + 2);
      if (position + 4 + value_length > length) return;
      record(attribute, data + position + 4, size_t(value_length));
      position += 4 + value_length;
    } else {
      record(attribute, data + position + 2, size_t(2));
      position += 4;
    }
  }
}

void read_kernel_info(const uint8_t* data, size_t length, KernelInfo& kernel) {
  for_each_info_record(data, length, [&](uint8_t attribute, const uint8_t* value, size_t value_length) {
    if (attribute == kAttrParamBankSize && value_length >= 2) {
      kernel.parameter_bytes = read<uint16_t>(value);
      kernel.has_parameter_info = true;
    } else if (attribute == kAttrKernelParamInfo && value_length >= 12) {
      const uint16_t ordinal = read<uint16_t>(value + 4);
      const uint16_t offset = read<uint16_t>(value + 6);
      const uint32_t size_field = read<uint32_t>(value + 8);
      if (ordinal >= 4096) return;
      if (kernel.parameters.size() <= ordinal) kernel.parameters.resize(ordinal + 1u);
      kernel.parameters[ordinal] = {offset, (size_field >> 18) & 0x3fff};
    } else if (attribute == kAttrMaxThreads && value_length >= 12) {
      kernel.max_threads_per_block = read<uint32_t>(value) * read<uint32_t>(value + 4) * read<uint32_t>(value + 8);
    }
  });
}

}  // namespace

int cubin_sm_arch(uint8_t abi_version, uint32_t e_flags) {
  return abi_version >= 8 ? int((e_flags >> 8) & 0xff) : int(e_flags & 0xff);
}

size_t elf_claimed_bytes(const uint8_t* data) {
  if (std::memcmp(data, ELFMAG, SELFMAG) != 0 || data[EI_CLASS] != ELFCLASS64 || data[EI_DATA] != ELFDATA2LSB) {
    return 0;
  }
  Elf64_Ehdr header = read<Elf64_Ehdr>(data);
  uint64_t end = sizeof(Elf64_Ehdr);
  end = std::max<uint64_t>(end, header.e_shoff + uint64_t(header.e_shnum) * header.e_shentsize);
  end = std::max<uint64_t>(end, header.e_phoff + uint64_t(header.e_phnum) * header.e_phentsize);
  return end > (1ull << 31) ? 0 : size_t(end);
}

size_t elf_extent_bytes(const uint8_t* data) {
  uint64_t end = elf_claimed_bytes(data);
  if (end == 0) return 0;
  const Elf64_Ehdr header = read<Elf64_Ehdr>(data);
  if (header.e_shentsize != sizeof(Elf64_Shdr)) return size_t(end);
  for (size_t i = 0; i < header.e_shnum; ++i) {
    const auto section = read<Elf64_Shdr>(data + header.e_shoff + i * sizeof(Elf64_Shdr));
    if (section.sh_type == SHT_NOBITS || section.sh_type == SHT_NULL || section.sh_type >= SHT_LOPROC) continue;
    end = std::max<uint64_t>(end, section.sh_offset + section.sh_size);
  }
  return end > (1ull << 31) ? 0 : size_t(end);
}

bool parse_cubin(const uint8_t* data, size_t bytes, ModuleImage& image, std::string& error) {
  if (bytes < sizeof(Elf64_Ehdr) || elf_claimed_bytes(data) == 0) {
    error = "not an ELF64 little-endian file";
    return false;
  }
  const Elf64_Ehdr header = read<Elf64_Ehdr>(data);
  if (header.e_machine != kElfMachineCuda) {
    error = "ELF e_machine is " + std::to_string(header.e_machine) + ", not EM_CUDA (190)";
    return false;
  }
  if (header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shstrndx >= header.e_shnum ||
      !fits(header.e_shoff, uint64_t(header.e_shnum) * sizeof(Elf64_Shdr), bytes)) {
    error = "bad section header table";
    return false;
  }
  std::vector<Section> sections(header.e_shnum);
  for (size_t i = 0; i < sections.size(); ++i) {
    sections[i].header = read<Elf64_Shdr>(data + header.e_shoff + i * sizeof(Elf64_Shdr));
    const Elf64_Shdr& s = sections[i].header;
    if (s.sh_type != SHT_NOBITS && s.sh_type != SHT_NULL && !fits(s.sh_offset, s.sh_size, bytes)) {
      // NVIDIA's own NOBITS-like types carry no file data either; only reject
      // sections that claim file bytes the image does not have.
      if (s.sh_type < SHT_LOPROC) {
        error = "section " + std::to_string(i) + " extends past the image";
        return false;
      }
    }
  }
  const Elf64_Shdr& names = sections[header.e_shstrndx].header;
  if (!fits(names.sh_offset, names.sh_size, bytes)) {
    error = "bad section name table";
    return false;
  }
  auto string_at = [&](const Elf64_Shdr& table, uint64_t offset) -> std::string {
    if (offset >= table.sh_size) return {};
    const char* begin = reinterpret_cast<const char*>(data + table.sh_offset + offset);
    return std::string(begin, strnlen(begin, size_t(table.sh_size - offset)));
  };
  for (Section& section : sections) section.name = string_at(names, section.header.sh_name);

  image.sm_arch = cubin_sm_arch(data[EI_ABIVERSION], header.e_flags);

  const Section* symbols = nullptr;
  for (const Section& section : sections) {
    if (section.header.sh_type == SHT_SYMTAB) symbols = &section;
  }
  if (!symbols || symbols->header.sh_entsize != sizeof(Elf64_Sym) || symbols->header.sh_link >= sections.size() ||
      !fits(symbols->header.sh_offset, symbols->header.sh_size, bytes)) {
    error = "no usable symbol table";
    return false;
  }
  const Elf64_Shdr& symbol_names = sections[symbols->header.sh_link].header;
  if (!fits(symbol_names.sh_offset, symbol_names.sh_size, bytes)) {
    error = "bad symbol name table";
    return false;
  }
  auto section_bytes = [&](const Section& section) { return data + section.header.sh_offset; };
  auto section_readable = [&](const Section& section) {
    return section.header.sh_type != SHT_NOBITS && fits(section.header.sh_offset, section.header.sh_size, bytes);
  };

  std::map<uint32_t, size_t> kernel_by_symbol;  // symbol index -> kernels[]
  const size_t symbol_count = symbols->header.sh_size / sizeof(Elf64_Sym);
  for (size_t index = 1; index < symbol_count; ++index) {
    const auto symbol = read<Elf64_Sym>(section_bytes(*symbols) + index * sizeof(Elf64_Sym));
    const unsigned type = ELF64_ST_TYPE(symbol.st_info);
    if (symbol.st_shndx == SHN_UNDEF || symbol.st_shndx >= sections.size()) continue;
    const Section& home = sections[symbol.st_shndx];
    std::string name = string_at(symbol_names, symbol.st_name);
    if (name.empty()) continue;
    if (type == STT_FUNC && (symbol.st_other & kStoCudaEntry)) {
      KernelInfo kernel;
      kernel.name = name;
      for (const Section& section : sections) {
        if (section.name == ".nv.info." + name && section_readable(section)) {
          read_kernel_info(section_bytes(section), size_t(section.header.sh_size), kernel);
        } else if (section.name == ".nv.shared." + name) {
          kernel.static_shared_bytes = uint32_t(section.header.sh_size);
        }
      }
      kernel_by_symbol[uint32_t(index)] = image.kernels.size();
      image.kernels.push_back(std::move(kernel));
    } else if ((type == STT_OBJECT || type == kSttCudaObject) &&
               (home.name.rfind(".nv.global", 0) == 0 || home.name.rfind(".nv.constant", 0) == 0)) {
      VariableInfo variable;
      variable.name = name;
      variable.bytes = symbol.st_size;
      variable.managed = (symbol.st_other & kStoCudaManaged) != 0;
      const bool has_data = home.name != ".nv.global" && section_readable(home) &&
                            fits(symbol.st_value, symbol.st_size, size_t(home.header.sh_size));
      if (has_data) {
        const uint8_t* first = section_bytes(home) + symbol.st_value;
        variable.initial_value.assign(first, first + symbol.st_size);
      }
      image.variables.push_back(std::move(variable));
    }
  }
  // Per-file attributes keyed by symbol index.
  for (const Section& section : sections) {
    if (section.name != ".nv.info" || !section_readable(section)) continue;
    for_each_info_record(section_bytes(section), size_t(section.header.sh_size),
                         [&](uint8_t attribute, const uint8_t* value, size_t value_length) {
                           if (value_length < 8) return;
                           auto kernel = kernel_by_symbol.find(read<uint32_t>(value));
                           if (kernel == kernel_by_symbol.end()) return;
                           if (attribute == kAttrRegisterCount) {
                             image.kernels[kernel->second].registers = read<uint32_t>(value + 4);
                           } else if (attribute == kAttrFrameSize) {
                             image.kernels[kernel->second].local_bytes = read<uint32_t>(value + 4);
                           }
                         });
  }
  return true;
}

}  // namespace simgpu
