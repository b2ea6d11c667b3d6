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

enum KernelId {
  kAmpereSgemm,
  kSm90XmmaGemmF16,
  kCutlassSgemm,
  kSplitKReduce,
  kKernelCount,
};

// Device symbol of each kernel as it appears in the fatbin.
const char* kernel_symbol(KernelId id);

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
  CUfunction functions[simblas::kKernelCount];
};

#endif
