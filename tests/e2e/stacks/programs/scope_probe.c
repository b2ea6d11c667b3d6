// scope_probe: what the program's global symbol scope holds under the shim.
// The shim loads libunwind for its stacks; it must do so privately: a
// libunwind in the global scope brings a weak `backtrace` and its own
// _Unwind_RaiseException family that could replace glibc's and libgcc's.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libgen.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

static int find_libunwind(struct dl_phdr_info* info, size_t size, void* found) {
  (void)size;
  if (info->dlpi_name != NULL && strstr(info->dlpi_name, "libunwind") != NULL) *(int*)found = 1;
  return 0;
}

static const char* provider(const char* name) {
  static char path[4096];
  Dl_info info;
  void* address = dlsym(RTLD_DEFAULT, name);
  if (address == NULL || dladdr(address, &info) == 0 || info.dli_fname == NULL) return "none";
  snprintf(path, sizeof path, "%s", info.dli_fname);
  return basename(path);
}

int main(void) {
  int loaded = 0;
  dl_iterate_phdr(find_libunwind, &loaded);
  printf("libunwind loaded: %s\n", loaded ? "yes" : "no");
  printf("unw_backtrace from: %s\n", provider("unw_backtrace"));
  printf("backtrace from: %s\n", provider("backtrace"));
  return 0;
}
