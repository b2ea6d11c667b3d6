/* Another tool preloaded after the shim, written the usual way: its wrapper
 * finds the next definition with dlsym(RTLD_NEXT). If the shim's dlsym made
 * lookups resolve relative to the shim, RTLD_NEXT would return this very
 * function and atoi would recurse until the stack overflows. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

static int (*next_atoi)(const char*);

static void resolve_next(void) {
  if (!next_atoi) next_atoi = (int (*)(const char*))dlsym(RTLD_NEXT, "atoi");
}

__attribute__((visibility("default"))) int atoi(const char* s) {
  resolve_next();
  if (!next_atoi || next_atoi == atoi) return -424242;
  return next_atoi(s) + 1000;
}

__attribute__((visibility("default"))) void* second_interposer_next_atoi(void) {
  resolve_next();
  return (void*)next_atoi;
}
