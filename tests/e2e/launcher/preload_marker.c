/* A user's own preload library: says on stderr that it was loaded, so a test
   can tell that the launcher kept it in LD_PRELOAD. */
#include <unistd.h>

__attribute__((constructor)) static void announce(void) {
  static const char kLine[] = "preload-marker loaded\n";
  ssize_t ignored = write(2, kLine, sizeof kLine - 1);
  (void)ignored;
}
