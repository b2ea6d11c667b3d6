// libstack_chain_lib.so: library code between the program and the CUDA
// runtime, with the two shapes symbolization must get right: a static
// (internal-linkage) function, and a function inlined into an exported one.
// The tests find the lines below by their "@site:" markers. Built with -g,
// without -g, and stripped (tests/e2e/stacks/meson.build).
#include <cuda_runtime_api.h>

#include <cstddef>

#define CHAIN_API extern "C" __attribute__((visibility("default")))

static __attribute__((noinline)) int copy_in_static_function(void* dst, const void* src, size_t bytes) {
  const int result = cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice);  // @site:static_copy
  asm volatile("" ::: "memory");  // keeps the call from being a tail call
  return result;
}

static inline __attribute__((always_inline)) int inlined_set(void* dst, size_t bytes) {
  const int result = cudaMemset(dst, 0, bytes);  // @site:inlined_set
  asm volatile("" ::: "memory");
  return result;
}

CHAIN_API int chain_copy(void* dst, const void* src, size_t bytes) {
  const int result = copy_in_static_function(dst, src, bytes);  // @site:chain_copy_call
  asm volatile("" ::: "memory");
  return result;
}

CHAIN_API int chain_set(void* dst, size_t bytes) {
  const int result = inlined_set(dst, bytes);  // @site:chain_set_call
  asm volatile("" ::: "memory");
  return result;
}
