// The traced process's side of capture on demand (control_page.h): maps the
// job's control page, holds a slot in it, and acts on the launcher's
// commands from its writer thread (a writer task: one load per drain).
#pragma once

#include "preload/config.h"

namespace proflaunch::control {

// runtime::start, after the capture state is set. Without a control page
// (not started by proflaunch, or an old launcher) nothing happens.
void start_client(const Config& config) noexcept;

// In a fork child: the page is inherited, the slot is the parent's; take
// one of its own (no thread starts here: the child's writer acts on
// commands once it runs).
void after_fork_in_child() noexcept;

// Exit: the slot says so (the launcher stops waiting for this process).
void at_exit() noexcept;

}  // namespace proflaunch::control
