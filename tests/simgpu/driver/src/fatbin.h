// The fatbin container nvcc writes (nvcc -fatbin, and the .nv_fatbin section of
// every object nvcc compiles): a 16-byte header, then entries each holding one
// cubin (ELF) or PTX text for one architecture, optionally compressed.
//
// Layout, as observed in nvcc 13.0 output (little-endian):
//   header: u32 magic 0xBA55ED50, u16 version 1, u16 header bytes (16), u64 bytes of entries
//   entry:  u16 kind (1 PTX, 2 ELF), u16 (0x0101), u32 entry header bytes (0x40 ELF,
//           0x50 PTX), u64 payload bytes (padded to 8), u32 compressed bytes, u32,
//           u16 minor, u16 major, u32 sm arch (75 = sm_75), u32 name offset,
//           u32 name bytes, u64 flags, u64 reserved, u64 uncompressed bytes
//   flags:  0x1 64-bit, 0x10 Linux, 0x2000 LZ4 block compression,
//           0x8000 zstd compression (nvcc 13's default for PTX, and for ELF with
//           -compress-mode=size)
// The host-side wrapper that points at a container (__fatBinC_Wrapper_t) starts
// with u32 magic 0x466243B1, u32 version, then the container's address.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace simgpu {

constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr uint32_t kFatbinWrapperMagic = 0x466243B1u;
constexpr size_t kFatbinHeaderBytes = 16;

enum class FatbinEntryKind : uint16_t { kPtx = 1, kElf = 2 };

struct FatbinEntry {
  FatbinEntryKind kind = FatbinEntryKind::kElf;
  int sm_arch = 0;               // 90 for sm_90 / compute_90
  std::vector<uint8_t> payload;  // decompressed; PTX is NUL-terminated
};

// Bytes of the container starting at `header` (whose first 16 bytes must be
// readable), or 0 if it does not start with a fatbin header.
size_t fatbin_container_bytes(const uint8_t* header);

// Parses one container of `bytes` bytes. False with a reason if malformed.
bool parse_fatbin(const uint8_t* data, size_t bytes, std::vector<FatbinEntry>& entries, std::string& error);

}  // namespace simgpu
