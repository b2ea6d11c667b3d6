// The runtime's registration ABI (code built by nvcc calls it from static
// constructors): it contributes kernels' device names, for handles the driver
// cannot name. The calls themselves are counted.
#pragma once

#include <cuda_runtime_api.h>

#include "preload/cuda/function_names.h"
#include "preload/cuda/rows/runtime_row.h"

namespace proflaunch::cuda {

struct RegistrationRow {
  const void* host_function;
  const char* device_name;     // __cudaRegisterFunction
  cudaKernel_t* kernel;        // __cudaGetKernel's output

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    const RegistrationRow row = describe();
    // Registration runs from static constructors, possibly before the shim
    // records; remembering the name is harmless either way.
    if (row.device_name != nullptr && !inside_profiler()) remember_host_stub(row.host_function, row.device_name);
    using Result = decltype(call_real());
    if constexpr (std::is_void_v<Result>) {
      RuntimeRow::run<Hook>([] { return rows::runtime_call(); }, call_real);
    } else {
      const Result result = RuntimeRow::run<Hook>([] { return rows::runtime_call(); }, call_real);
      if (result == cudaSuccess && row.kernel != nullptr && !inside_profiler())
        remember_runtime_kernel(*row.kernel, row.host_function);
      return result;
    }
  }
};

namespace rows {
inline RegistrationRow register_function(const char* host_function, const char* device_name) noexcept {
  return {host_function, device_name, nullptr};
}
inline RegistrationRow get_kernel(cudaKernel_t* kernel, const void* host_function) noexcept {
  return {host_function, nullptr, kernel};
}
}  // namespace rows

}  // namespace proflaunch::cuda
