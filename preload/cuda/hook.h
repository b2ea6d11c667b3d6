// What every generated CUDA wrapper does (gen/gen_cuda_hooks.py writes one
// per exported ABI variant of the driver and the runtime):
//
//   extern "C" CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount) {
//     return run_hook<Hook...>([&] { return copy(host_to_device(dstDevice, srcHost), ByteCount); },
//                                 [&](auto* real) { return real(dstDevice, srcHost, ByteCount); });
//   }
//
// The first lambda is the API's row (hook_rows.txt): what the call records
// beyond its name, duration and result. Its type picks the recording family
// (rows/*.h), and it is evaluated only when the call is recorded. The second
// calls the real function of exactly this variant.
#pragma once

#include <cstdint>
#include <type_traits>

#include "preload/intercept/hook_table.h"
#include "preload/record/early_counts.h"

// Exported hook functions. Everything else in the shim is hidden.
#define PROFLAUNCH_EXPORT __attribute__((visibility("default")))

namespace proflaunch::cuda {

enum class Library : uint8_t { kDriver, kRuntime };

inline constexpr const char* kDriverLibrary = "libcuda.so";
inline constexpr const char* kRuntimeLibrary = "libcudart.so";

// One ABI variant, as the generator describes it. `Slots` holds the real
// functions and the table rows of its library (Slots::real[kIndex],
// Slots::entries[kIndex]).
template <typename Slots, uint16_t kIndex, uint16_t kApi, bool kPerThread, typename F>
struct Hook {
  using Function = F;
  static constexpr uint16_t api = kApi;
  static constexpr bool per_thread = kPerThread;
  static constexpr Library library = Slots::library;

  // The real function: the slot when the dlsym or cuGetProcAddress
  // interception already filled it, else resolved now (and retried on later
  // calls while the library is not loaded yet).
  static F* real() noexcept {
    void* function = __atomic_load_n(&Slots::real[kIndex], __ATOMIC_ACQUIRE);
    if (__builtin_expect(function == nullptr, 0)) function = intercept::real_function(Slots::entries[kIndex]);
    return reinterpret_cast<F*>(function);
  }
};

template <typename F>
struct ResultOf;
template <typename R, typename... Args>
struct ResultOf<R(Args...)> {
  using type = R;
};

// What a wrapper returns when the library it wraps is not loaded at all (a
// lookup found the shim's export but nothing behind it): the library's own
// "not initialized" error, or a zero value.
template <typename Hook>
inline typename ResultOf<typename Hook::Function>::type not_loaded() noexcept {
  using Result = typename ResultOf<typename Hook::Function>::type;
  if constexpr (std::is_void_v<Result>) {
    return;
  } else if constexpr (std::is_enum_v<Result>) {
    // CUDA_ERROR_NOT_INITIALIZED (3) and cudaErrorInitializationError (3).
    return static_cast<Result>(3);
  } else {
    return Result{};
  }
}

template <typename Hook, typename Row, typename Invoke>
inline auto run_hook(Row&& row, Invoke&& invoke) {
  auto* real = Hook::real();
  if (__builtin_expect(real == nullptr, 0)) return not_loaded<Hook>();
  using RowType = std::decay_t<decltype(row())>;
  if (__builtin_expect(counting_before_start(), 0)) {
    // A constructor that runs before the shim's, or a call made while
    // recording is paused (early_counts.h): the row passes through (nothing
    // records now) but still learns what it can, such as a registration's
    // kernel name; the call is counted.
    using Result = typename ResultOf<typename Hook::Function>::type;
    if constexpr (std::is_void_v<Result>) {
      RowType::template run<Hook>(row, [&] { return invoke(real); });
      count_unrecorded_call(Hook::api);
      return;
    } else {
      const Result result = RowType::template run<Hook>(row, [&] { return invoke(real); });
      count_unrecorded_call(Hook::api);
      return result;
    }
  }
  return RowType::template run<Hook>(row, [&] { return invoke(real); });
}

}  // namespace proflaunch::cuda
