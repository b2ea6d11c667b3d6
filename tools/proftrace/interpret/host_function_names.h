// Names of host functions: what cudaLaunchHostFunc, cudaStreamAddCallback and
// hipStreamAddCallback queued on a stream. The KernelLaunch of one (host
// function flag) holds the address of the program's function (formats/README.md,
// KernelLaunch), which is named as a call-stack frame would be: from the
// trace's embedded symbol table (the launcher's, for traces converted on
// another machine), else from the module file on this machine (elfutils: a
// static function is named too, which the shim's dladdr cannot do), else the
// shim's FunctionDef name, else module+offset. The module is looked for among
// every module the section loaded, so a callback of a plugin closed before
// the end of the run is still named.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tools/proftrace/interpret/trace_model.h"
#include "tools/symbols/symbolizer.h"

namespace proflaunch::tools::interpret {

class HostFunctionNames {
 public:
  // The name of the host function at `address` in `section`, called at
  // `at_ns` (which FunctionDef applies): "mark_step_done(void*)",
  // "libplugin.so+0x1a2b", "host function 0x7f...".
  std::string name(const SectionModel& section, uint64_t address, uint64_t at_ns);

  // Module files that could not be read (elfutils), with the reason.
  const std::vector<std::string>& problems() const { return symbolizer_.problems(); }

 private:
  std::string symbol_name(const SectionModel& section, uint64_t address);

  symbols::Symbolizer symbolizer_;
  std::map<std::pair<uint64_t, uint64_t>, std::string> symbols_;  // (section, address): "" when unnamed
};

}  // namespace proflaunch::tools::interpret
