// Frames of every shape the native walker meets, in a library of its own
// (frames of the test executable are left out like the shim's), for
// native_walker_test: each function calls `capture(context)` at the end of
// a chain of its shape. Built at -O2 without sibling calls, so every level is
// a frame; the compiler chooses the unwind information, as it does for real
// programs.
#include <alloca.h>
#include <signal.h>

#include <cstddef>
#include <cstring>

#define SHAPE_API extern "C" __attribute__((visibility("default"), noinline))

using Capture = void (*)(void*);

namespace {
void keep(void* p) { asm volatile("" : : "r"(p) : "memory"); }
}  // namespace

// Plain %rsp-based frames of a few sizes, `levels` deep.
SHAPE_API void shape_recursion(int levels, Capture capture, void* context) {
  volatile char locals[24];
  locals[0] = static_cast<char>(levels);
  if (levels <= 0) capture(context);
  else shape_recursion(levels - 1, capture, context);
  keep(const_cast<char*>(locals));
}

// A frame larger than a page (multi-byte CFA offsets).
SHAPE_API void shape_big_frame(Capture capture, void* context) {
  volatile char big[40000];
  big[0] = 1;
  capture(context);
  keep(const_cast<char*>(big));
}

// alloca: the compiler keeps a frame pointer, and the CFA is %rbp-based.
SHAPE_API void shape_alloca(size_t bytes, Capture capture, void* context) {
  void* area = alloca(bytes);
  std::memset(area, 0, bytes);
  capture(context);
  keep(area);
}

// A frame built with a frame pointer (as distributions now build libraries).
SHAPE_API __attribute__((optimize("no-omit-frame-pointer"))) void shape_frame_pointer(int levels, Capture capture,
                                                                                       void* context) {
  volatile int local = levels;
  if (levels <= 0) capture(context);
  else shape_frame_pointer(levels - 1, capture, context);
  keep(const_cast<int*>(&local));
}

// A call after an early-return path: the unwind information saves the
// frame's state before the first epilogue and restores it after
// (DW_CFA_remember_state / DW_CFA_restore_state).
SHAPE_API int shape_early_return(int early, Capture capture, void* context) {
  volatile int a = early, b = 2, c = 3;
  if (a == 1) return b + c;
  capture(context);
  return a + b + c;
}

// From a signal handler: the frame of the kernel's signal return has no
// standard shape. libunwind gets the stack.
namespace {
Capture g_signal_capture;
void* g_signal_context;
void on_signal(int) { g_signal_capture(g_signal_context); }
}  // namespace
SHAPE_API void shape_signal(Capture capture, void* context) {
  g_signal_capture = capture;
  g_signal_context = context;
  struct sigaction action {};
  action.sa_handler = on_signal;
  struct sigaction previous {};
  sigaction(SIGUSR2, &action, &previous);
  raise(SIGUSR2);
  sigaction(SIGUSR2, &previous, nullptr);
}

// Two functions of the same shape, for call chains that part and meet again.
SHAPE_API void shape_left(int levels, unsigned path, Capture capture, void* context);
SHAPE_API void shape_right(int levels, unsigned path, Capture capture, void* context);
SHAPE_API void shape_branches(int levels, unsigned path, Capture capture, void* context) {
  if (levels <= 0) capture(context);
  else if (path & 1u) shape_right(levels - 1, path >> 1, capture, context);
  else shape_left(levels - 1, path >> 1, capture, context);
  asm volatile("" ::: "memory");
}
SHAPE_API void shape_left(int levels, unsigned path, Capture capture, void* context) {
  shape_branches(levels, path, capture, context);
  asm volatile("" ::: "memory");
}
SHAPE_API void shape_right(int levels, unsigned path, Capture capture, void* context) {
  volatile int pad = 1;  // not the same code as shape_left (identical code folding)
  shape_branches(levels, path, capture, context);
  keep(const_cast<int*>(&pad));
}

// Calls fn(capture, context): the known caller of the swapped libraries.
SHAPE_API void shape_call_through(void (*fn)(Capture, void*), Capture capture, void* context) {
  fn(capture, context);
  asm volatile("" ::: "memory");
}
