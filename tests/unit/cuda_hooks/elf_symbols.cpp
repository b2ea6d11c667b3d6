#include "tests/unit/cuda_hooks/elf_symbols.h"

#include <cstdio>
#include <sstream>

namespace proflaunch::testing {

std::set<std::string> defined_dynamic_symbols(const std::string& nm, const std::string& library,
                                              std::string* error) {
  std::set<std::string> names;
  const std::string command = "'" + nm + "' -D --defined-only '" + library + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    *error = "cannot run " + command;
    return names;
  }
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  const int status = pclose(pipe);
  if (status != 0) {
    *error = command + " failed: " + output.substr(0, 500);
    return {};
  }
  // "<address> <type> <name>[@@version]"
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string address, type, name;
    if (!(fields >> address >> type >> name)) continue;
    names.insert(name.substr(0, name.find('@')));
  }
  return names;
}

}  // namespace proflaunch::testing
