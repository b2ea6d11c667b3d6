// The one way the simulator's sources include cuda.h.
//
// The simulator defines every ABI variant of the driver API under its exported
// name (cuMemAlloc, cuMemAlloc_v2, cuMemcpyHtoD_v2_ptds, ...). With
// __CUDA_API_VERSION_INTERNAL, cuda.h declares all of them under those names
// instead of #defining the plain names to the newest variant, so the compiler
// checks each definition against the real prototype. meson passes the macro on
// the command line too, so no source can include cuda.h without it.
#pragma once

#ifndef __CUDA_API_VERSION_INTERNAL
#define __CUDA_API_VERSION_INTERNAL 1
#endif
#include <cuda.h>

// Declares the per-thread default stream variants that cuda.h leaves out with the
// exact prototype of the legacy variant (`decltype` of the declared function).
#define SIMGPU_DECLARE_VARIANT_LIKE(variant, declared) extern "C" decltype(declared) variant
