// The LD_PRELOAD value the traced program starts with.
//
// AddressSanitizer and ThreadSanitizer refuse to run unless their runtime is
// the first library in the process ("ASan runtime does not come first in
// initial library list"). A program built with them, or a shim built with
// them, would die at start under a plain `LD_PRELOAD=libproflaunch.so`. So
// the runtimes that the program or the shim needs (their DT_NEEDED entries)
// are put ahead of the shim, as bare sonames that ld.so looks up as it would
// for the program itself. Sanitizer runtimes the user preloaded stay ahead too.
#pragma once

#include <string>
#include <vector>

namespace proflaunch::launcher {

// Whether a library must come first in the process (ASan, TSan, HWASan; the
// GNU and LLVM names). UBSan's runtime has no such rule.
bool is_first_only_runtime(const std::string& library);

// The DT_NEEDED entries of an ELF file; empty when it is not one (a script).
std::vector<std::string> needed_libraries(const std::string& elf_path);

// The file execvp would run for `program` with this PATH ("" when none).
std::string resolve_program(const std::string& program, const std::string& path_variable);

// The runtimes that must precede the shim: those of the shim and of the
// program, in that order, once each.
std::vector<std::string> first_only_runtimes(const std::string& shim_path,
                                             const std::string& program_path);

// The LD_PRELOAD value: sanitizer runtimes (the user's, then the needed ones
// the user did not name), the shim, then the user's other entries in order.
// A list that already names the shim (proflaunch inside a traced process) is
// kept as it is.
std::string preload_value(const std::string& shim, const std::string& users_list,
                          const std::vector<std::string>& runtimes);

// ThreadSanitizer kills a child of a multi-threaded fork that starts a
// thread, and the shim's writer makes every traced process multi-threaded: a
// TSan-built program whose fork children start threads (their own, or the
// writer) would die under proflaunch. TSan's die_after_fork=0 lets them. The
// TSAN_OPTIONS value to set when a runtime in `runtimes` is TSan's and the
// user's options (`users_options`, null when unset) do not name the flag;
// "" when nothing is to be set.
std::string tsan_options_value(const char* users_options, const std::vector<std::string>& runtimes);

}  // namespace proflaunch::launcher
