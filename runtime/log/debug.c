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
  sigset_t resume, old;

  log_phase (stage);
  if (want == NULL || strcmp (want, stage) != 0)
    return;
  /* Blocked before the line is out: a SIGUSR1 sent on seeing it waits. */
  sigemptyset (&resume);
  sigaddset (&resume, SIGUSR1);
  sigprocmask (SIG_BLOCK, &resume, &old);
  line = xasprintf ("paused at %s\n", stage);
  write_all (STDERR_FILENO, line, strlen (line));
  /* Waiting for SIGUSR1 and not stopped by SIGSTOP: a stopped moat would
   * look like a hang to a test that waits for it; SIGKILL ends both. */
  while (sigwaitinfo (&resume, NULL) < 0)
    ;
  sigprocmask (SIG_SETMASK, &old, NULL);
}
#else
/* ISO C forbids an empty translation unit. */
typedef int debug_unused;
#endif
