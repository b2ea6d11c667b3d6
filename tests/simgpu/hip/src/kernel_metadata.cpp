#include "kernel_metadata.h"

#include <elf.h>

#include <cstring>
#include <string_view>

namespace simhip {
namespace {

constexpr uint32_t kNoteAmdgpuMetadata = 32;  // NT_AMDGPU_METADATA
constexpr int kMaxDepth = 32;

// Just enough MessagePack (msgpack.org spec) to walk the metadata map.
class MsgpackReader {
 public:
  MsgpackReader(const uint8_t* data, size_t bytes) : p_(data), end_(data + bytes) {}

  bool map_header(uint32_t& count) { return header(0x80, 0xde, count); }
  bool array_header(uint32_t& count) { return header(0x90, 0xdc, count); }

  bool string(std::string_view& out) {
    uint64_t length = 0;
    if (!more(1)) return false;
    const uint8_t tag = *p_;
    if ((tag & 0xe0) == 0xa0) {
      length = tag & 0x1f;
      ++p_;
    } else if (tag >= 0xd9 && tag <= 0xdb) {
      ++p_;
      if (!big_endian(size_t{1} << (tag - 0xd9), length)) return false;
    } else {
      return false;
    }
    if (!more(length)) return false;
    out = std::string_view(reinterpret_cast<const char*>(p_), length);
    p_ += length;
    return true;
  }

  bool unsigned_integer(uint64_t& value) {
    if (!more(1)) return false;
    const uint8_t tag = *p_;
    if (tag <= 0x7f) {
      value = tag;
      ++p_;
      return true;
    }
    if (tag >= 0xcc && tag <= 0xcf) {
      ++p_;
      return big_endian(size_t{1} << (tag - 0xcc), value);
    }
    return false;
  }

  bool skip(int depth = 0) {
    if (depth > kMaxDepth || !more(1)) return false;
    const uint8_t tag = *p_;
    uint32_t count = 0;
    std::string_view ignored;
    uint64_t length = 0;
    if (tag <= 0x7f || tag >= 0xe0 || tag == 0xc0 || tag == 0xc2 || tag == 0xc3) return advance(1);
    if ((tag & 0xe0) == 0xa0 || (tag >= 0xd9 && tag <= 0xdb)) return string(ignored);
    if ((tag & 0xf0) == 0x80 || tag == 0xde || tag == 0xdf) {
      if (!map_header(count)) return false;
      for (uint64_t i = 0; i < uint64_t{count} * 2; ++i)
        if (!skip(depth + 1)) return false;
      return true;
    }
    if ((tag & 0xf0) == 0x90 || tag == 0xdc || tag == 0xdd) {
      if (!array_header(count)) return false;
      for (uint32_t i = 0; i < count; ++i)
        if (!skip(depth + 1)) return false;
      return true;
    }
    switch (tag) {
      case 0xc4: case 0xc5: case 0xc6:  // bin 8/16/32
        ++p_;
        return big_endian(size_t{1} << (tag - 0xc4), length) && advance(length);
      case 0xc7: case 0xc8: case 0xc9:  // ext 8/16/32: length, type, data
        ++p_;
        return big_endian(size_t{1} << (tag - 0xc7), length) && advance(length + 1);
      case 0xca: return advance(5);
      case 0xcb: return advance(9);
      case 0xcc: case 0xd0: return advance(2);
      case 0xcd: case 0xd1: return advance(3);
      case 0xce: case 0xd2: return advance(5);
      case 0xcf: case 0xd3: return advance(9);
      case 0xd4: return advance(3);  // fixext 1, 2, 4, 8, 16: type and data
      case 0xd5: return advance(4);
      case 0xd6: return advance(6);
      case 0xd7: return advance(10);
      case 0xd8: return advance(18);
      default: return false;
    }
  }

 private:
  bool more(uint64_t n) const { return uint64_t(end_ - p_) >= n; }
  bool advance(uint64_t n) {
    if (!more(n)) return false;
    p_ += n;
    return true;
  }
  bool big_endian(size_t n, uint64_t& value) {
    if (!more(n)) return false;
    value = 0;
    for (size_t i = 0; i < n; ++i) value = value << 8 | p_[i];
    p_ += n;
    return true;
  }
  // fix forms carry the count in the tag's low 4 bits; 16- and 32-bit forms follow.
  bool header(uint8_t fix, uint8_t wide16, uint32_t& count) {
    if (!more(1)) return false;
    const uint8_t tag = *p_;
    uint64_t value = 0;
    if ((tag & 0xf0) == fix) {
      count = tag & 0x0f;
      ++p_;
      return true;
    }
    if (tag != wide16 && tag != wide16 + 1) return false;
    ++p_;
    if (!big_endian(tag == wide16 ? 2 : 4, value)) return false;
    count = static_cast<uint32_t>(value);
    return true;
  }

  const uint8_t* p_;
  const uint8_t* end_;
};

bool read_kernel(MsgpackReader& in, KernelResources& kernel) {
  uint32_t fields = 0;
  if (!in.map_header(fields)) return false;
  for (uint32_t i = 0; i < fields; ++i) {
    std::string_view key, text;
    if (!in.string(key)) return false;
    uint64_t value = 0;
    uint32_t* target = nullptr;
    if (key == ".vgpr_count") target = &kernel.vgpr_count;
    else if (key == ".agpr_count") target = &kernel.agpr_count;
    else if (key == ".sgpr_count") target = &kernel.sgpr_count;
    else if (key == ".group_segment_fixed_size") target = &kernel.group_segment_bytes;
    else if (key == ".private_segment_fixed_size") target = &kernel.private_segment_bytes;
    else if (key == ".wavefront_size") target = &kernel.wavefront_size;
    else if (key == ".max_flat_workgroup_size") target = &kernel.max_flat_workgroup_size;
    if (key == ".name") {
      if (!in.string(text)) return false;
      kernel.name.assign(text);
    } else if (target != nullptr) {
      if (!in.unsigned_integer(value) || value > UINT32_MAX) return false;
      *target = static_cast<uint32_t>(value);
    } else if (!in.skip()) {
      return false;
    }
  }
  return true;
}

bool read_metadata(const uint8_t* data, size_t bytes, std::vector<KernelResources>& kernels) {
  MsgpackReader in(data, bytes);
  uint32_t entries = 0;
  if (!in.map_header(entries)) return false;
  for (uint32_t i = 0; i < entries; ++i) {
    std::string_view key;
    if (!in.string(key)) return false;
    if (key != "amdhsa.kernels") {
      if (!in.skip()) return false;
      continue;
    }
    uint32_t count = 0;
    if (!in.array_header(count)) return false;
    for (uint32_t k = 0; k < count; ++k) {
      KernelResources kernel;
      if (!read_kernel(in, kernel)) return false;
      kernels.push_back(std::move(kernel));
    }
  }
  return true;
}

size_t align4(size_t n) { return (n + 3) & ~size_t{3}; }

}  // namespace

std::vector<KernelResources> code_object_kernel_resources(const uint8_t* data, size_t bytes) {
  std::vector<KernelResources> kernels;
  if (data == nullptr || bytes < sizeof(Elf64_Ehdr)) return kernels;
  Elf64_Ehdr header;
  std::memcpy(&header, data, sizeof header);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shoff > bytes ||
      uint64_t(header.e_shnum) * sizeof(Elf64_Shdr) > bytes - header.e_shoff)
    return kernels;
  for (size_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr section;
    std::memcpy(&section, data + header.e_shoff + i * sizeof section, sizeof section);
    if (section.sh_type != SHT_NOTE || section.sh_offset > bytes || section.sh_size > bytes - section.sh_offset)
      continue;
    const uint8_t* note = data + section.sh_offset;
    size_t left = section.sh_size;
    while (left >= sizeof(Elf64_Nhdr)) {
      Elf64_Nhdr n;
      std::memcpy(&n, note, sizeof n);
      const size_t name_bytes = align4(n.n_namesz), desc_bytes = align4(n.n_descsz);
      if (name_bytes > left - sizeof n || desc_bytes > left - sizeof n - name_bytes) break;
      const char* name = reinterpret_cast<const char*>(note + sizeof n);
      const uint8_t* desc = note + sizeof n + name_bytes;
      if (n.n_type == kNoteAmdgpuMetadata && n.n_namesz == 7 && std::memcmp(name, "AMDGPU", 7) == 0) {
        if (!read_metadata(desc, n.n_descsz, kernels)) kernels.clear();
        return kernels;
      }
      note += sizeof n + name_bytes + desc_bytes;
      left -= sizeof n + name_bytes + desc_bytes;
    }
  }
  return kernels;
}

}  // namespace simhip
