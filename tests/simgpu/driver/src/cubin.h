// Reads what the simulator needs from a cubin (an ELF file with e_machine
// EM_CUDA = 190, as `nvcc -cubin` writes and fatbins contain): the target SM,
// the kernels (STT_FUNC symbols marked as entry points, STO_CUDA_ENTRY 0x10 in
// st_other) with the attributes nvcc records in .nv.info sections, and the
// __device__/__constant__ variables.
//
// .nv.info sections hold records of {u8 format, u8 attribute, ...}: format 4
// carries a u16 byte count and that many bytes, formats 1-3 carry a u16 value.
// Attributes used here, checked against nvcc 13 output:
//   0x05 MAX_THREADS (u32 x,y,z from __launch_bounds__), 0x17 KPARAM_INFO
//   (u32 index, u16 ordinal, u16 offset, u32 with the size in bits 18-31),
//   0x19 CBANK_PARAM_SIZE (u16 total parameter bytes), and in the per-file
//   .nv.info: 0x2f REGCOUNT and 0x11 FRAME_SIZE (u32 symbol index, u32 value).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace simgpu {

constexpr uint16_t kElfMachineCuda = 190;

struct KernelParameter {
  uint32_t offset = 0;
  uint32_t bytes = 0;
};

struct KernelInfo {
  std::string name;  // the ELF symbol: mangled for C++ kernels
  bool has_parameter_info = false;
  uint32_t parameter_bytes = 0;
  std::vector<KernelParameter> parameters;  // by ordinal
  uint32_t max_threads_per_block = 0;       // 0: no __launch_bounds__
  uint32_t static_shared_bytes = 0;
  uint32_t local_bytes = 0;
  uint32_t registers = 0;
};

struct VariableInfo {
  std::string name;
  uint64_t bytes = 0;
  std::vector<uint8_t> initial_value;  // empty: zero-initialized
  bool managed = false;                // __managed__ (st_other bit 0x4; PTX .attribute(.managed))
};

struct ModuleImage {
  int sm_arch = 0;  // 90 for sm_90
  bool from_ptx = false;
  std::vector<KernelInfo> kernels;
  std::vector<VariableInfo> variables;
};

// Bytes the ELF header at `data` claims the file spans (section and program
// header tables, every section), or 0 if the first 64 bytes are not an ELF64
// little-endian header. `data` must have 64 readable bytes.
size_t elf_claimed_bytes(const uint8_t* data);

// Bytes spanned by the header tables and every section with file data, given
// that the first elf_claimed_bytes(data) bytes are readable.
size_t elf_extent_bytes(const uint8_t* data);

// Parses a cubin of `bytes` bytes; every offset is checked against `bytes`.
// False with a reason if it is not a well-formed CUDA ELF.
bool parse_cubin(const uint8_t* data, size_t bytes, ModuleImage& image, std::string& error);

// SM architecture from a cubin's e_flags (ELF ABI version 8+: bits 8-15;
// older cubins: bits 0-7).
int cubin_sm_arch(uint8_t abi_version, uint32_t e_flags);

}  // namespace simgpu
