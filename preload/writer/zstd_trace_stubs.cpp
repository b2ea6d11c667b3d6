// libzstd.a references ZSTD_trace_compress_begin/end as weak undefined
// symbols: hooks a program may define. Left undefined in our library, they
// would bind at run time to any definition in the traced process, which would
// then receive our compression contexts. Hidden no-op definitions keep the
// binding inside the shim.
#include <cstdint>

extern "C" {

__attribute__((visibility("hidden"))) unsigned long long ZSTD_trace_compress_begin(
    const void* /*cctx*/) {
  return 0;  // 0: do not trace this compression
}

__attribute__((visibility("hidden"))) void ZSTD_trace_compress_end(unsigned long long /*ctx*/,
                                                                   const void* /*trace*/) {}

}  // extern "C"
