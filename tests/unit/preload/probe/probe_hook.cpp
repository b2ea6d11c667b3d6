// The test-only hook: interposes probe_event() exactly as a CUDA hook would
// interpose a driver call (guard, time, real call, emit, commit).
#include <dlfcn.h>

#include "formats/records.h"
#include "preload/hook_sets.h"
#include "preload/record/emit.h"
#include "tests/unit/preload/probe/probe.h"

namespace {

using ProbeFunction = void(uint64_t);
ProbeFunction* g_real_probe_event = nullptr;

}  // namespace

// The id probe records carry in ApiSpan::api.
extern const uint16_t kProbeApi = 1;

// The probe shim's hook set (libproflaunch.so's is the CUDA hooks).
void proflaunch::start_hook_sets(const Config&) noexcept {
  g_real_probe_event = reinterpret_cast<ProbeFunction*>(dlsym(RTLD_NEXT, "probe_event"));
  define_api(kProbeApi, "probe_event", format::ApiDomain::kOther, format::Vendor::kUnknown);
}

extern "C" __attribute__((visibility("default"))) void probe_event(uint64_t value) {
  proflaunch::ReentrancyGuard guard;
  if (!guard.outermost()) {
    if (g_real_probe_event != nullptr) g_real_probe_event(value);
    return;
  }
  const uint64_t begin_ticks = proflaunch::now_ticks();
  if (g_real_probe_event != nullptr) g_real_probe_event(value);
  if (auto* record = proflaunch::emit<proflaunch::format::ApiCallRecord>()) {
    record->span.begin_ns = begin_ticks;
    record->span.end_ns = proflaunch::now_ticks();
    record->span.correlation_id = value;
    record->span.api = kProbeApi;
    proflaunch::commit();
  }
}
