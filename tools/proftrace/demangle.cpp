#include "tools/proftrace/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace proflaunch::tools {

std::string demangle(std::string_view name) {
  // Only Itanium-mangled names: __cxa_demangle would also "demangle" plain
  // words that happen to be valid type encodings ("f" -> "float").
  if (name.size() < 3 || name.substr(0, 2) != "_Z") return std::string(name);
  const std::string owned(name);
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(owned.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || !demangled) return owned;
  return std::string(demangled.get());
}

}  // namespace proflaunch::tools
