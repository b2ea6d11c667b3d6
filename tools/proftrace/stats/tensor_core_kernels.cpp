#include "tools/proftrace/stats/tensor_core_kernels.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace proflaunch::tools::stats {
namespace {

// Names of the matrix-multiply-accumulate instruction families (HMMA, IMMA,
// WMMA, Hopper's GMMA, NVIDIA's XMMA library) and CUTLASS's tensor-core
// kernels ("cutlass_80_tensorop_s1688gemm_...").
constexpr std::string_view kWords[] = {"hmma", "imma", "wmma", "xmma", "gmma", "tensorop"};

// cuBLAS and CUTLASS name a kernel's MMA shape after its element type:
// "volta_h884gemm", "turing_h1688gemm", "ampere_s16816gemm", "i8816",
// "c1688" (complex). The shape must not continue with another digit.
constexpr std::string_view kShapes[] = {"884", "1688", "8816", "16816", "16832"};
constexpr std::string_view kTypeLetters = "hsicdzb";

bool has_shape_token(const std::string& name) {
  for (std::string_view shape : kShapes) {
    for (size_t at = name.find(shape); at != std::string::npos; at = name.find(shape, at + 1)) {
      const size_t end = at + shape.size();
      if (at == 0 || kTypeLetters.find(name[at - 1]) == std::string_view::npos) continue;
      if (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) continue;
      return true;
    }
  }
  return false;
}

}  // namespace

bool is_tensor_core_kernel(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (std::string_view word : kWords)
    if (lower.find(word) != std::string::npos) return true;
  return has_shape_token(lower);
}

}  // namespace proflaunch::tools::stats
