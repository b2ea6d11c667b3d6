// libprobe.so: a stand-in for a library the profiler hooks (libcuda, libcudart).
// probe_event() does nothing; libproflaunch_probe.so interposes it and records
// one ApiCallRecord per call with `value` as its correlation id, through the
// same emit path the CUDA hooks use.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void probe_event(uint64_t value);

#ifdef __cplusplus
}
#endif
