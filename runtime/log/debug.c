/* Fault points for tests (see debug.h). */
#include "debug.h"

#if MOAT_DEBUG
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/util.h"

void
debug_pause (const char *stage)
{
  const char *want = getenv ("MOAT_DEBUG_PAUSE");
  cleanup_free char *line = NULL;

  log_phase (stage);
  if (want == NULL || strcmp (want, stage) != 0)
    return;
  line = xasprintf ("paused at %s\n", stage);
  write_all (STDERR_FILENO, line, strlen (line));
  /* pause() and not SIGSTOP: a stopped moat would look like a hang to a
   * test that waits for it, and SIGKILL ends both alike. */
  for (;;)
    pause ();
}
#else
/* ISO C forbids an empty translation unit. */
typedef int debug_unused;
#endif
