// libstack_runpath_target.so: found only through the RUNPATH ($ORIGIN/
// runpath_libs) of the program that dlopens it by bare name.
#include <cuda_runtime_api.h>

#include <cstddef>

extern "C" __attribute__((visibility("default"))) int runpath_target_zero(void* dst, size_t bytes) {
  const int result = cudaMemset(dst, 0, bytes);
  asm volatile("" ::: "memory");
  return result;
}
