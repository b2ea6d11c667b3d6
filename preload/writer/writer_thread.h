// The writer thread's work (writer.h says what it is for): each cycle it
// drains every thread's ring into staged Events chunks, runs the writer
// tasks, and flushes the staged chunk to the section's output (or, in
// flight-recorder mode, keeps it). Internal to preload/writer: writer.cpp
// starts it and talks to it through Control (writer_control.h).
#pragma once

#include "preload/state/section.h"

namespace proflaunch::writer {

class Writer;

// A writer for `section`, or null when out of memory.
Writer* new_writer(const SectionIdentity& section) noexcept;
void delete_writer(Writer* writer) noexcept;

// The thread's body: serves Control's requests until asked to stop.
void run_writer(Writer& writer) noexcept;

// A writer without a thread (Control::no_thread, or a thread that never
// began): what the thread's last round does, on the calling thread.
void end_section_inline(Writer& writer) noexcept;

}  // namespace proflaunch::writer
