/* inotifyfill: per-user quotas for the G12 tests. Static, libc only.
 *
 *   inotifyfill one    open one inotify instance: "ok", or the error
 *   inotifyfill fill   open instances until the kernel refuses one, print
 *                      "opened N: STRERROR (errno E)", then hold them all
 *                      until killed
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  long n = 0;

  setvbuf (stdout, NULL, _IOLBF, 0);
  if (argc != 2)
    {
      fputs ("usage: inotifyfill one|fill\n", stderr);
      return 2;
    }
  if (strcmp (argv[1], "one") == 0)
    {
      if (inotify_init1 (IN_CLOEXEC) < 0)
        {
          printf ("inotify_init1: %s (errno %d)\n", strerror (errno), errno);
          return 1;
        }
      puts ("ok");
      return 0;
    }
  if (strcmp (argv[1], "fill") != 0)
    return 2;
  while (n < 100000 && inotify_init1 (IN_CLOEXEC) >= 0)
    n++;
  printf ("opened %ld: %s (errno %d)\n", n, strerror (errno), errno);
  for (;;)
    pause ();
}
