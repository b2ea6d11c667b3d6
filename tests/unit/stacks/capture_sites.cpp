// Two call sites in a library of their own for stack_capture_test: frames of
// the test executable itself are left out like the shim's are in a hook, so
// the frames that tell the sites apart must live here.
#define SITE_API extern "C" __attribute__((visibility("default"), noinline))

SITE_API void capture_site_a(void (*capture)(void*), void* context) {
  capture(context);
  asm volatile("" ::: "memory");  // not a tail call
}

SITE_API void capture_site_b(void (*capture)(void*), void* context) {
  capture(context);
  asm volatile("" ::: "memory");
}
