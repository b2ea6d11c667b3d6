#include "tools/proftrace/stacks/runtime_modules.h"

#include <fnmatch.h>

#include <cctype>
#include <string>

namespace proflaunch::tools {
namespace {

// fnmatch patterns on the module's base name. "lib<name>.so*" covers the
// development link (.so), the soname (.so.13) and the real file
// (.so.13.0.48). Keep in step with tools/README.md.
constexpr const char* kRuntimeAndVendorModules[] = {
    // NVIDIA: driver (and its helper objects), runtime, compilers, CUPTI
    "libcuda.so*", "libnvidia-*.so*", "libcudart.so*", "libnvrtc.so*", "libnvrtc-builtins.so*",
    "libnvJitLink.so*", "libcupti.so*",
    // NVIDIA math, DNN and communication libraries (cuDNN 9 ships as libcudnn_<part>.so)
    "libcublas.so*", "libcublasLt.so*", "libcudnn.so*", "libcudnn_*.so*", "libcufft.so*", "libcufftw.so*",
    "libcurand.so*", "libcusparse.so*", "libcusparseLt.so*", "libcusolver.so*", "libcusolverMg.so*",
    "libcutensor.so*", "libnccl.so*",
    // AMD: HIP runtime and the HSA runtime under it, hipRTC
    "libamdhip64.so*", "libhsa-runtime64.so*", "libhiprtc.so*",
    // AMD math, DNN and communication libraries and their hip* wrappers
    "librocblas.so*", "libhipblas.so*", "libhipblaslt.so*", "librocsolver.so*", "libhipsolver.so*",
    "librocfft.so*", "libhipfft.so*", "librocrand.so*", "libhiprand.so*", "librocsparse.so*",
    "libhipsparse.so*", "libMIOpen.so*", "librccl.so*",
    // proflaunch's shim: the walker leaves its frames out; this is in case one slips through
    "libproflaunch*.so*",
};

// auditwheel renames the libraries it bundles into a wheel with a hash of
// their contents ("libcudart-d0da41ae.so.11.0"): the name without it.
std::string without_wheel_hash(std::string name) {
  const size_t so = name.find(".so");
  const size_t dash = name.rfind('-', so);
  if (so == std::string::npos || dash == std::string::npos || so - dash - 1 < 8) return name;
  for (size_t i = dash + 1; i < so; ++i)
    if (!std::isxdigit(static_cast<unsigned char>(name[i]))) return name;
  return name.erase(dash, so - dash);
}

}  // namespace

bool is_runtime_or_vendor_module(std::string_view module_path) {
  const size_t slash = module_path.rfind('/');
  const std::string name =
      without_wheel_hash(std::string(slash == std::string_view::npos ? module_path : module_path.substr(slash + 1)));
  if (name.empty()) return false;
  for (const char* pattern : kRuntimeAndVendorModules)
    if (fnmatch(pattern, name.c_str(), 0) == 0) return true;
  return false;
}

}  // namespace proflaunch::tools
