// What the simulated "JIT" reads from PTX text: the target architecture, the
// kernels (.entry) with their parameter layout, and module-scope .global and
// .const variables with their integer and hex-float initializers.
#pragma once

#include <string>

#include "cubin.h"

namespace simgpu {

// True if `text` looks like PTX (comments, whitespace, then a directive).
bool looks_like_ptx(const char* text, size_t length);

// Parses NUL-terminated PTX. False with a reason if there is no .target.
bool parse_ptx(const char* text, ModuleImage& image, std::string& error);

}  // namespace simgpu
