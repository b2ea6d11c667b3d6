// Real rocRAND (Debian's librocrand1, built by AMD's toolchain) on the
// simulated HIP runtime, unmodified: uniform floats from two generators.
// Prints what it did; exits non-zero if rocRAND reports an error.
#include <hip/hip_runtime_api.h>
#include <rocrand/rocrand.h>

#include <cstdio>

static int check(rocrand_status status, const char* what) {
  if (status != ROCRAND_STATUS_SUCCESS) {
    std::fprintf(stderr, "rocrand_uniform: %s failed: %d\n", what, static_cast<int>(status));
    return 1;
  }
  return 0;
}

int main() {
  constexpr size_t kCount = 1 << 18;
  float* numbers = nullptr;
  if (hipMalloc(reinterpret_cast<void**>(&numbers), kCount * sizeof(float)) != hipSuccess) return 2;
  const rocrand_rng_type types[] = {ROCRAND_RNG_PSEUDO_PHILOX4_32_10, ROCRAND_RNG_PSEUDO_XORWOW};
  for (rocrand_rng_type type : types) {
    rocrand_generator generator = nullptr;
    if (check(rocrand_create_generator(&generator, type), "rocrand_create_generator")) return 1;
    if (check(rocrand_set_seed(generator, 1234), "rocrand_set_seed")) return 1;
    if (check(rocrand_generate_uniform(generator, numbers, kCount), "rocrand_generate_uniform")) return 1;
    if (check(rocrand_destroy_generator(generator), "rocrand_destroy_generator")) return 1;
  }
  if (hipDeviceSynchronize() != hipSuccess || hipFree(numbers) != hipSuccess) return 2;
  std::printf("rocrand_uniform: generated %zu uniform floats with 2 generators\n", kCount);
  return 0;
}
