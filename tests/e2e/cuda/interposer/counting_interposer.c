/* A second tool preloaded next to the shim (LD_PRELOAD=this library, which
 * proflaunch keeps after its own): it wraps a CUDA runtime function and a
 * libc function that the shim wraps too, the usual way - the next
 * definition comes from dlsym(RTLD_NEXT). If the shim broke RTLD_NEXT
 * (resolving it relative to the shim instead of this library), the lookup
 * would return these very wrappers and the calls would recurse.
 *
 * At exit it reports on stderr how often each wrapper ran and whether the
 * next definition was found:
 *   counting_interposer: cudaMemcpyAsync=N pthread_setname_np=M next=ok */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

#define EXPORT __attribute__((visibility("default")))

typedef int (*memcpy_async_fn)(void*, const void*, size_t, int, void*);
typedef int (*setname_fn)(pthread_t, const char*);

static memcpy_async_fn next_memcpy_async;
static setname_fn next_setname;
static int memcpy_async_calls;
static int setname_calls;
static int next_wrong;

EXPORT int cudaMemcpyAsync(void* dst, const void* src, size_t bytes, int kind, void* stream) {
  if (!next_memcpy_async) next_memcpy_async = (memcpy_async_fn)dlsym(RTLD_NEXT, "cudaMemcpyAsync");
  if (!next_memcpy_async || next_memcpy_async == cudaMemcpyAsync) {
    next_wrong = 1;
    return 999; /* not a cudaError_t the program expects: it fails loudly */
  }
  __atomic_add_fetch(&memcpy_async_calls, 1, __ATOMIC_RELAXED);
  return next_memcpy_async(dst, src, bytes, kind, stream);
}

EXPORT int pthread_setname_np(pthread_t thread, const char* name) {
  if (!next_setname) next_setname = (setname_fn)dlsym(RTLD_NEXT, "pthread_setname_np");
  if (!next_setname || next_setname == pthread_setname_np) {
    next_wrong = 1;
    return 0;
  }
  __atomic_add_fetch(&setname_calls, 1, __ATOMIC_RELAXED);
  return next_setname(thread, name);
}

__attribute__((destructor)) static void report(void) {
  fprintf(stderr, "counting_interposer: cudaMemcpyAsync=%d pthread_setname_np=%d next=%s\n",
          memcpy_async_calls, setname_calls, next_wrong ? "WRONG" : "ok");
}
