// State shared by the handle and GEMM halves of libsimblas.
#ifndef SIMBLAS_INTERNAL_H
#define SIMBLAS_INTERNAL_H

#include <stddef.h>

#include "driver_entry_points.h"
#include "simblas.h"

// The embedded fatbin (generated from simblas_kernels.cu at build time).
extern "C" const unsigned char simblas_fatbin[];
extern "C" const size_t simblas_fatbin_bytes;

namespace simblas {

// GEMM kernel families; each has one kernel per operand layout.
enum GemmFamily { kAmpereSgemm, kSm90XmmaGemmF16, kCutlassSgemm, kGemmFamilyCount };
enum OperandLayout { kLayoutNN, kLayoutNT, kLayoutTN, kOperandLayoutCount };

// Device symbols as they appear in the fatbin.
const char* gemm_kernel_symbol(GemmFamily family, OperandLayout layout);
extern const char* const kSplitKReduceSymbol;

// Split-K partial sums live in the handle's workspace (4 MiB, cuBLAS's
// default size on most architectures).
constexpr size_t kWorkspaceBytes = size_t(4) << 20;

}  // namespace simblas

struct simblasContext {
  const simblas::DriverEntryPoints* driver;
  CUcontext context;
  CUdevice device;
  int compute_capability_major;
  CUstream stream;
  CUdeviceptr workspace;
  CUfunction gemm[simblas::kGemmFamilyCount][simblas::kOperandLayoutCount];
  CUfunction split_k_reduce;
};

#endif
