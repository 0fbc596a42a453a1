/* The argv and environment block the kernel reads for /proc/PID/cmdline
 * and /proc/PID/environ: the strings the kernel copied onto the stack at
 * execve, argv's then the environment's, one after the other. moat hides
 * it in what it clones into a container, from the clone on: the child is
 * born with it hidden (the parent hides it around the clone), so there is
 * no moment a payload could read it. PR_SET_MM would need CAP_SYS_RESOURCE
 * in the initial user namespace, which a child born in a new one lacks;
 * overwriting its own memory needs nothing. */
#include "procargs.h"

#include <string.h>
#include <unistd.h>

#include "util.h"

extern char **environ;

static char *block;       /* the kernel's: argv[0] up to the last variable */
static size_t block_len;  /* 0: not taken (unit tests, moat-dl) */
static char *block_saved; /* what it held, for procargs_show */
/* The copies, held for the life of the process: setenv may replace
 * environ with an array of glibc's own, and these must stay reachable
 * (valgrind's soak tests count an unreachable block as a leak; `used`
 * keeps the compiler from dropping stores it sees no reader of). */
static char **argv_copy __attribute__ ((used));
static char **environ_copy __attribute__ ((used));

/* Where the run of strings starting at v[0] ends, if they lie end to end
 * from start; NULL if one does not. */
static char *
run_end (char *start, char *const *v)
{
  char *p = start;

  for (size_t i = 0; v && v[i]; i++)
    {
      if (v[i] != p)
        return NULL;
      p += strlen (p) + 1;
    }
  return p;
}

void
procargs_take (int argc, char **argv)
{
  char *end, *env_end;
  char **env = NULL;
  size_t n = 0;

  if (argc < 1 || argv[0] == NULL || (end = run_end (argv[0], argv)) == NULL)
    return;
  /* The environment follows, unless something moved it already. */
  env_end = environ && environ[0] == end ? run_end (end, environ) : NULL;
  if (env_end)
    end = env_end;
  block = argv[0];
  block_len = (size_t)(end - block);
  block_saved = xmalloc (block_len);
  memcpy (block_saved, block, block_len);
  argv_copy = xcalloc ((size_t)argc + 1, sizeof (char *));
  for (int i = 0; i < argc; i++)
    argv[i] = argv_copy[i] = xstrdup (argv[i]);
  while (environ && environ[n])
    n++;
  env = xcalloc (n + 1, sizeof (char *));
  for (size_t i = 0; i < n; i++)
    env[i] = xstrdup (environ[i]);
  environ = environ_copy = env;
}

void
procargs_hide (void)
{
  static const char title[] = "moat";

  if (block_len == 0)
    return;
  memset (block, 0, block_len);
  if (block_len >= sizeof (title))
    memcpy (block, title, sizeof (title));
}

void
procargs_show (void)
{
  if (block_len > 0)
    memcpy (block, block_saved, block_len);
}
