// Call stacks as people read them: the Python and native frames of a
// CallStack merged into one list, root first and the leaf LAST, e.g.
//
//   /home/me/train.py:42 forward
//   at::native::add(...) (BinaryOps.cpp:120)
//   launch_add_kernel (Loops.cuh:88) [inlined]
//   libcudart.so.13+0x1f2a0
//   cudaLaunchKernel
//
// Native names come from the trace's embedded symbol table when it has one
// (the launcher's), else from the module files on this machine (libdw), else
// module+offset. Python frames replace the interpreter's
// _PyEval_EvalFrameDefault frames they ran in (formats/README.md, "Call
// stacks"), and the interpreter's other native frames (calls, vectorcalls)
// are left out; when the native stack does not reach the interpreter (cut at
// the depth limit) the Python frames come first, then the native ones.
//
// For every report that shows stacks (convert, stats, the memory report).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/proftrace/interpret/trace_model.h"
#include "tools/symbols/symbolizer.h"

namespace proflaunch::tools {

class StackFormatter {
 public:
  // The merged frames, root first, `leaf` (the API called) last when not
  // empty. Empty when the section defines neither stack.
  std::vector<std::string> frames(const SectionModel& section, uint32_t native_stack,
                                  uint32_t python_stack, std::string_view leaf = {});

  // The frames joined with newlines.
  std::string text(const SectionModel& section, uint32_t native_stack, uint32_t python_stack,
                   std::string_view leaf = {});

  // Where the call came from in one frame (attribute(...).text). Empty when
  // unknown.
  std::string call_site(const SectionModel& section, uint32_t native_stack, uint32_t python_stack);

  // The frame a call is attributed to, and what it is made of.
  struct CallSite {
    std::string text;      // as frames() shows it: "model.py:7 Layer.forward", "relu(float*, int) (app.cu:12)"
    std::string function;  // "" when unknown
    std::string file;      // the source file as recorded or symbolized; "" when unknown
    uint32_t line = 0;     // 0 when unknown
    std::string module;    // native: the module's file name ("libapp.so"), "" when unknown; Python: its package
    bool python = false;
  };
  // The innermost Python frame when there is one; else the innermost native
  // frame outside the runtimes, the driver and the vendor libraries
  // (runtime_modules.h) and other than nvcc's launch stubs; else, when every
  // frame is in those libraries, the outermost of them (the library's entry
  // point the user called). Empty text when the stacks are unknown.
  CallSite attribute(const SectionModel& section, uint32_t native_stack, uint32_t python_stack);

  // The merged frames as frames() shows them (root first, no leaf), each
  // with what it is made of: a CPU sample's functions, lines and modules.
  std::vector<CallSite> sites(const SectionModel& section, uint32_t native_stack, uint32_t python_stack);

  // Module files that could not be read for local symbolization.
  const std::vector<std::string>& problems() const { return symbolizer_.problems(); }

 private:
  struct NativeFrame {
    std::string text;
    bool interpreter = false;  // a _PyEval_EvalFrameDefault frame
    bool runtime_or_vendor = false;  // in a module of runtime_modules.h's list
    int32_t module = -1;
    std::string function;  // the symbol's parts, for attribute()
    std::string file;
    uint32_t line = 0;
  };
  // Innermost first, inline frames expanded (cached per section and stack).
  const std::vector<NativeFrame>& native_frames(const SectionModel& section, uint32_t id);
  void add_address_frames(const SectionModel& section, const symbols::NativeFrameRef& ref,
                          std::vector<NativeFrame>& out);

  symbols::Symbolizer symbolizer_;
  std::map<std::pair<uint64_t, uint32_t>, std::vector<NativeFrame>> native_cache_;
};

// "/path/train.py:42 forward"
std::string python_frame_text(const SectionModel& section, const format::PythonFrame& frame);

// What `--by module` groups a Python file under: the top-level package of a
// file in site-packages or dist-packages ("torch"), else the file's directory.
std::string python_package(std::string_view file);

}  // namespace proflaunch::tools
