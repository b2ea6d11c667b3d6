// Device code as clang's HIP toolchain writes it: a clang offload bundle
// ("__CLANG_OFFLOAD_BUNDLE__", a u64 entry count, then per entry u64 offset,
// u64 size, u64 id length and the id, e.g. "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-")
// holding one AMDGPU code object (an ELF shared object) per target, in which
// every kernel has a kernel descriptor symbol "<kernel>.kd".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace simhip {

struct BundleEntry {
  std::string id;
  const uint8_t* data = nullptr;
  size_t bytes = 0;
};

// The entries of a bundle at `data` (its size unknown: the header's offsets
// are trusted, as the real runtime does). False if it is not a bundle.
bool parse_bundle(const void* data, std::vector<BundleEntry>& entries);
// The same with a known size: every offset is checked against it.
bool parse_bundle(const void* data, size_t bytes, std::vector<BundleEntry>& entries);

// Whether a bundle entry id's target ("gfx90a", "gfx90a:xnack-") can run on a
// device whose target is `device_target` ("gfx90a:sramecc+:xnack-"): the same
// processor, and every feature the code object states has the device's setting.
bool target_matches(const std::string& entry_id, const std::string& device_target);

// The kernels of an AMDGPU code object (names of its "*.kd" symbols). False if
// it is not a well-formed ELF64 file.
bool code_object_kernels(const uint8_t* data, size_t bytes, std::vector<std::string>& kernels);

}  // namespace simhip
