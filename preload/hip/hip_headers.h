// The one way the shim and the simulated HIP runtime include the HIP API:
// hip_runtime_api.h and hip_ext.h for the AMD platform, with a host compiler.
//
// hip_ext.h ends with a launch template (hipExtLaunchKernelGGL) that calls
// pArgs, which amd_hip_runtime.h defines only when clang compiles HIP. GCC
// checks the template's names when it reads it, so a declaration of that
// name comes first. The template is never instantiated here.
#pragma once

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif

#include <hip/hip_runtime_api.h>

#include <cstddef>
#include <tuple>

#if !defined(__clang__)
template <std::size_t n, typename... Ts>
void pArgs(const std::tuple<Ts...>&, void**);
#endif
#include <hip/hip_ext.h>
