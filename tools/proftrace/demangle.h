// C++ symbol demangling for kernel names (abi::__cxa_demangle).
#pragma once

#include <string>
#include <string_view>

namespace proflaunch::tools {

// The demangled name, or `name` unchanged when it is not a mangled C++ name
// (C kernels, Triton kernels, names already demangled).
std::string demangle(std::string_view name);

}  // namespace proflaunch::tools
