#include "image_loader.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "fatbin.h"
#include "ptx.h"

namespace simgpu {
namespace {

constexpr size_t kMaxPtxBytes = size_t(1) << 30;

// A cubin runs on devices of the same major version and a minor not below its own.
bool cubin_runs_on(int cubin_arch, int device_arch) {
  return cubin_arch / 10 == device_arch / 10 && cubin_arch <= device_arch;
}

CUresult from_ptx(const char* text, const ImageTarget& target, ModuleImage& out) {
  ModuleImage image;
  std::string error;
  if (!parse_ptx(text, image, error)) return CUDA_ERROR_INVALID_PTX;
  if (image.sm_arch > target.sm_arch) return CUDA_ERROR_NO_BINARY_FOR_GPU;
  out = std::move(image);
  return CUDA_SUCCESS;
}

CUresult from_cubin(const uint8_t* data, size_t bytes, const ImageTarget& target, ModuleImage& out) {
  ModuleImage image;
  std::string error;
  if (!parse_cubin(data, bytes, image, error)) return CUDA_ERROR_INVALID_IMAGE;
  if (!cubin_runs_on(image.sm_arch, target.sm_arch)) return CUDA_ERROR_NO_BINARY_FOR_GPU;
  out = std::move(image);
  return CUDA_SUCCESS;
}

CUresult from_fatbin(const uint8_t* data, size_t bytes, const ImageTarget& target, ModuleImage& out) {
  std::vector<FatbinEntry> entries;
  std::string error;
  if (!parse_fatbin(data, bytes, entries, error)) return CUDA_ERROR_INVALID_IMAGE;
  const FatbinEntry* best_cubin = nullptr;
  const FatbinEntry* best_ptx = nullptr;
  for (const FatbinEntry& entry : entries) {
    if (entry.kind == FatbinEntryKind::kElf && cubin_runs_on(entry.sm_arch, target.sm_arch) &&
        (!best_cubin || entry.sm_arch > best_cubin->sm_arch)) {
      best_cubin = &entry;
    }
    if (entry.kind == FatbinEntryKind::kPtx && entry.sm_arch <= target.sm_arch &&
        (!best_ptx || entry.sm_arch > best_ptx->sm_arch)) {
      best_ptx = &entry;
    }
  }
  if (best_cubin) return from_cubin(best_cubin->payload.data(), best_cubin->payload.size(), target, out);
  if (best_ptx && target.ptx_jit_enabled) {
    return from_ptx(reinterpret_cast<const char*>(best_ptx->payload.data()), target, out);
  }
  return CUDA_ERROR_NO_BINARY_FOR_GPU;
}

// Length of the NUL-terminated string at `text`, reading only mapped pages;
// returns false if no NUL is found before unmapped memory or the cap.
bool mapped_string_length(const char* text, size_t& length) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  size_t checked = 0;
  while (checked < kMaxPtxBytes) {
    const size_t in_page = page - (reinterpret_cast<uintptr_t>(text + checked) % page);
    if (!memory_is_mapped(text + checked, in_page)) return false;
    if (const void* nul = std::memchr(text + checked, 0, in_page)) {
      length = size_t(static_cast<const char*>(nul) - text);
      return true;
    }
    checked += in_page;
  }
  return false;
}

}  // namespace

bool memory_is_mapped(const void* address, size_t bytes) {
  if (!address) return false;
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(address) / page * page;
  const uintptr_t end = reinterpret_cast<uintptr_t>(address) + bytes;
  if (end < begin) return false;
  // msync fails with ENOMEM on unmapped pages without touching them.
  for (uintptr_t at = begin; at < end; at += page) {
    if (msync(reinterpret_cast<void*>(at), page, MS_ASYNC) != 0 && errno == ENOMEM) return false;
  }
  return true;
}

CUresult load_module_image(const void* image, const ImageTarget& target, ModuleImage& out) {
  if (!image || !memory_is_mapped(image, 1)) return CUDA_ERROR_INVALID_VALUE;
  if (!memory_is_mapped(image, 16)) return CUDA_ERROR_INVALID_IMAGE;  // a few bytes before unmapped memory
  const auto* data = static_cast<const uint8_t*>(image);
  uint32_t magic;
  std::memcpy(&magic, data, sizeof(magic));
  if (magic == kFatbinWrapperMagic) {
    const void* container = nullptr;
    std::memcpy(&container, data + 8, sizeof(container));
    if (!memory_is_mapped(container, kFatbinHeaderBytes)) return CUDA_ERROR_INVALID_IMAGE;
    std::memcpy(&magic, container, sizeof(magic));
    if (magic != kFatbinMagic) return CUDA_ERROR_INVALID_IMAGE;
    return load_module_image(container, target, out);
  }
  if (magic == kFatbinMagic) {
    const size_t bytes = fatbin_container_bytes(data);
    if (bytes == 0 || !memory_is_mapped(data, bytes)) return CUDA_ERROR_INVALID_IMAGE;
    return from_fatbin(data, bytes, target, out);
  }
  if (std::memcmp(data,
                  "\x7f"
                  "ELF",
                  4) == 0) {
    if (!memory_is_mapped(data, 64)) return CUDA_ERROR_INVALID_IMAGE;
    const size_t header_bytes = elf_claimed_bytes(data);
    if (header_bytes == 0 || !memory_is_mapped(data, header_bytes)) return CUDA_ERROR_INVALID_IMAGE;
    const size_t bytes = elf_extent_bytes(data);
    if (bytes == 0 || !memory_is_mapped(data, bytes)) return CUDA_ERROR_INVALID_IMAGE;
    return from_cubin(data, bytes, target, out);
  }
  size_t length = 0;
  const auto* text = static_cast<const char*>(image);
  if (mapped_string_length(text, length) && looks_like_ptx(text, length)) {
    if (!target.ptx_jit_enabled) return CUDA_ERROR_JIT_COMPILER_NOT_FOUND;
    return from_ptx(text, target, out);
  }
  return CUDA_ERROR_INVALID_IMAGE;
}

CUresult load_module_image_bytes(const uint8_t* data, size_t bytes, const ImageTarget& target, ModuleImage& out) {
  if (!data || bytes < 16) return CUDA_ERROR_INVALID_IMAGE;
  uint32_t magic;
  std::memcpy(&magic, data, sizeof(magic));
  if (magic == kFatbinMagic) return from_fatbin(data, bytes, target, out);
  if (std::memcmp(data,
                  "\x7f"
                  "ELF",
                  4) == 0)
    return from_cubin(data, bytes, target, out);
  std::string text(reinterpret_cast<const char*>(data), bytes);
  if (looks_like_ptx(text.c_str(), text.size())) {
    if (!target.ptx_jit_enabled) return CUDA_ERROR_JIT_COMPILER_NOT_FOUND;
    return from_ptx(text.c_str(), target, out);
  }
  return CUDA_ERROR_INVALID_IMAGE;
}

}  // namespace simgpu
