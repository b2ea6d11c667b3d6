// What a part file says first about its section: the process (ProcessInfo).
#pragma once

#include "formats/records.h"
#include "preload/config.h"
#include "preload/state/section.h"

namespace proflaunch {

// The first record of the section's first Definitions chunk. Interns the host
// name, command line, executable and tool version (reads /proc: writer thread).
format::ProcessInfoRecord build_process_info(const SectionIdentity& section,
                                             const Config& config) noexcept;

}  // namespace proflaunch
