// How to step from a frame to its caller, read from a loaded object's
// .eh_frame (the call frame information every x86-64 object carries for C++
// exceptions), for the native stack walker (native_unwinder.cpp).
//
// Only the shapes the walker can step exactly, reading nothing but the
// return address and the saved %rbp, are described: the caller's stack
// pointer (the CFA) is %rsp or %rbp plus a constant, the return address is
// at CFA-8, %rsp is not saved, and %rbp is either unchanged or saved at a
// constant offset from the CFA. That is what compilers emit for ordinary
// functions, with or without frame pointers. Anything else (CFA or register
// expressions: stack realignment; signal frames; a CFA in another register;
// no unwind information at all) is kUnsupported, and the caller leaves the
// whole stack to libunwind.
#pragma once

#include <cstdint>

namespace proflaunch::stacks {

enum class FrameRuleKind : uint8_t {
  kNone = 0,        // (empty cache slot)
  kStandard,        // step as described by the fields below
  kOutermost,       // the return address is undefined: the first frame of a
                    // thread or of the program (_start, clone3)
  kUnsupported,     // libunwind's business
};

struct FrameRule {
  FrameRuleKind kind = FrameRuleKind::kNone;
  bool cfa_from_rbp = false;  // CFA = %rbp + cfa_offset (else %rsp + cfa_offset)
  bool rbp_saved = false;     // caller's %rbp at CFA + rbp_offset (else unchanged)
  int32_t cfa_offset = 0;
  int32_t rbp_offset = 0;
};

// The rule in effect at code address `pc` of the object whose
// PT_GNU_EH_FRAME segment (.eh_frame_hdr) starts at `eh_frame_hdr`.
// Reads only that object's mapped unwind sections; allocates nothing.
// kUnsupported when `pc` has no FDE or the FDE is outside the subset above.
FrameRule eh_frame_rule(const uint8_t* eh_frame_hdr, uintptr_t pc) noexcept;

}  // namespace proflaunch::stacks
