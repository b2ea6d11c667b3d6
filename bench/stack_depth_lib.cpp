// A call chain of a chosen length for bench_stack_capture, in a library of
// its own: the stack capture leaves out frames of the object that contains
// it (in the shim: the shim itself; here: the benchmark executable), so the
// frames to be counted must live elsewhere.
extern "C" __attribute__((visibility("default"), noinline)) void bench_at_depth(
    int remaining, void (*body)(void*), void* context) {
  if (remaining <= 0)
    body(context);
  else
    bench_at_depth(remaining - 1, body, context);
  asm volatile("" ::: "memory");  // not a tail call: every level stays a frame
}
