// The shim's dlsym/dlvsym (docs/design.md, "Where to intercept").
//
// Triton, XLA and our own simulated cuBLAS-like path look driver functions up
// by name on a handle of libcuda (dlsym(handle, "cuLaunchKernel")). Such a
// lookup searches only that handle's dependencies and so bypasses the preload:
// the interposer hands out the shim's wrapper instead, after recording what
// the real lookup returned.
//
// Everything else must behave exactly as if the shim were not there. glibc
// resolves RTLD_NEXT (and the scope of RTLD_DEFAULT) relative to the object
// that called dlsym, found from the return address. A C wrapper that calls the
// real dlsym would make every such lookup in the process resolve relative to
// the shim, which breaks other interposers (sanitizers, other tools). So the
// exported dlsym/dlvsym are assembly stubs (dlsym_trampoline.S) that ask
// `route_dlsym` whether to handle the lookup and otherwise JUMP to libc's
// function with the caller's stack untouched.
#pragma once

#include <cstdint>

namespace proflaunch::intercept {

using DlsymFn = void* (*)(void* handle, const char* name);
using DlvsymFn = void* (*)(void* handle, const char* name, const char* version);

// libc's functions (found without calling dlsym; see libc_symbols.h).
// Never null after the first call unless libc itself cannot be found.
DlsymFn real_dlsym();
DlvsymFn real_dlvsym();

// What the hooks layer tells the interposer. All callbacks must be cheap,
// must not allocate and must not call dlsym/dlvsym of the shim.
struct SymbolPolicy {
  // Fast filter: could `name` be one of ours? Called for every lookup on a
  // specific handle or RTLD_DEFAULT, so it must be a few instructions.
  bool (*wants)(const char* name);
  // `real` is what the lookup found (non-null); returns what to hand out:
  // the wrapper for exactly this symbol, or `real` when there is none.
  void* (*wrap)(const char* name, void* real);
  // For RTLD_DEFAULT: does a real definition of `name` exist anywhere in the
  // process outside the shim? If not, the lookup must fail as it would
  // without the shim (programs probe for CUDA this way).
  bool (*real_exists)(const char* name);
};

// Installs the policy; until then every lookup is passed straight through.
// The policy object must live forever.
void install_symbol_policy(const SymbolPolicy* policy);

// Counters for diagnostics and tests.
struct DlsymStats {
  uint64_t wrapped;      // lookups answered with a wrapper
  uint64_t hidden;       // RTLD_DEFAULT lookups answered with NULL (no real definition)
};
DlsymStats dlsym_stats();

}  // namespace proflaunch::intercept

// Called by the assembly stubs. Returns the answer in `result` when
// `handled` is non-zero; otherwise the stub tail-jumps to libc.
struct ProflaunchDlsymRoute {
  void* result;
  uintptr_t handled;
};
extern "C" ProflaunchDlsymRoute proflaunch_route_dlsym(void* handle, const char* name,
                                                       const char* version);
extern "C" void* proflaunch_real_dlsym_ptr;
extern "C" void* proflaunch_real_dlvsym_ptr;
