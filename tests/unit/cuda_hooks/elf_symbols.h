// The dynamic symbols a shared object defines, as `nm -D --defined-only`
// lists them (the test reads binaries it must not load).
#pragma once

#include <set>
#include <string>

namespace proflaunch::testing {

// Names of the defined dynamic symbols of `library`, without version
// suffixes (@@libcudart.so.13). Empty on failure, with `error` set.
std::set<std::string> defined_dynamic_symbols(const std::string& nm, const std::string& library,
                                              std::string* error);

}  // namespace proflaunch::testing
