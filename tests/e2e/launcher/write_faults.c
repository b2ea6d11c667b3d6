// Write errors for the shim's part files, injected from outside: preloaded
// after the shim, this write(2) sits between the shim and libc. For
// descriptors open on a *.part file, PROBE_WRITE_FAULT says what happens:
//   short             every write takes at most 100 bytes (the caller loops)
//   eio:AFTER:COUNT   once AFTER bytes are in part files, COUNT writes fail
//   enospc:AFTER:COUNT  with EIO or ENOSPC (COUNT 0: every write from then on)
// Other descriptors, and every descriptor without the variable, are left alone.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ssize_t (*real_write)(int, const void*, size_t);
static unsigned long long part_bytes;  // per process: only the writer thread writes parts
static unsigned long long failed_writes;

static int is_part(int fd) {
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n < 5) return 0;
  path[n] = '\0';
  return strcmp(path + n - 5, ".part") == 0;
}

__attribute__((visibility("default"))) ssize_t write(int fd, const void* data, size_t bytes) {
  if (real_write == NULL) real_write = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
  const char* spec = getenv("PROBE_WRITE_FAULT");
  if (spec == NULL || !is_part(fd)) return real_write(fd, data, bytes);
  if (strcmp(spec, "short") == 0) {
    if (bytes > 100) bytes = 100;
  } else {
    char kind[16] = {0};
    unsigned long long after = 0, count = 0;
    if (sscanf(spec, "%15[a-z]:%llu:%llu", kind, &after, &count) == 3 && part_bytes >= after &&
        (count == 0 || failed_writes < count)) {
      ++failed_writes;
      errno = strcmp(kind, "enospc") == 0 ? ENOSPC : EIO;
      return -1;
    }
  }
  const ssize_t written = real_write(fd, data, bytes);
  if (written > 0) part_bytes += (unsigned long long)written;
  return written;
}
