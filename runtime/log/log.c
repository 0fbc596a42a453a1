/* The --log file (see log.h). Each line is opened, appended in one write
 * and closed: verbs log a handful of lines, and an engine may rotate the
 * file between them. */
#include "log.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../oci/json.h"
#include "../../lib/util.h"

static struct
{
  const char *path;
  bool json;
  bool debug;
  pid_t owner;
  struct timespec start;
} log_state;

void
log_setup (const char *path, bool json, bool debug)
{
  log_state.path = path;
  log_state.json = json;
  log_state.debug = debug;
  log_state.owner = getpid ();
  clock_gettime (CLOCK_MONOTONIC, &log_state.start);
}

bool
log_debug_enabled (void)
{
  return log_state.debug && getpid () == log_state.owner;
}

/* The msg="..." of a text line, " and \\ escaped as logrus does. */
static char *
text_quote (const char *msg)
{
  size_t n = strlen (msg);
  char *out = xmalloc (2 * n + 3), *o = out;
  *o++ = '"';
  for (const char *p = msg; *p; p++)
    {
      if (*p == '"' || *p == '\\')
        *o++ = '\\';
      *o++ = *p == '\n' ? ' ' : *p;
    }
  *o++ = '"';
  *o = '\0';
  return out;
}

static void
log_line (const char *level, const char *msg)
{
  cleanup_close int fd = -1;
  cleanup_free char *line = NULL;
  char now[64];

  if (getpid () != log_state.owner)
    return;
  /* Without --log, --debug goes to stderr as runc's does (errors are
   * printed there by main already). */
  if (log_state.path == NULL && strcmp (level, "debug") != 0)
    return;
  if (log_state.path)
    fd = open (log_state.path,
               O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
  else
    fd = fcntl (STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  if (fd < 0)
    return;
  now_rfc3339 (now, sizeof (now));
  if (log_state.json && log_state.path)
    {
      struct json_writer *w = json_writer_new (false);
      char *j;
      jw_object_begin (w);
      jw_key (w, "level");
      jw_string (w, level);
      jw_key (w, "msg");
      jw_string (w, msg);
      jw_key (w, "time");
      jw_string (w, now);
      jw_object_end (w);
      j = json_writer_finish (w);
      line = xasprintf ("%s\n", j);
      free (j);
    }
  else
    {
      cleanup_free char *quoted = text_quote (msg);
      line = xasprintf ("time=\"%s\" level=%s msg=%s\n", now, level, quoted);
    }
  write_all (fd, line, strlen (line));
}

void
log_error (const char *msg)
{
  log_line ("error", msg);
}

void
log_debug (const char *fmt, ...)
{
  cleanup_free char *msg = NULL;
  va_list ap;

  if (!log_debug_enabled ())
    return;
  va_start (ap, fmt);
  if (vasprintf (&msg, fmt, ap) < 0)
    msg = NULL;
  va_end (ap);
  if (msg)
    log_line ("debug", msg);
}

void
log_phase (const char *stage)
{
  struct timespec now;
  long long us;

  if (!log_debug_enabled ())
    return;
  clock_gettime (CLOCK_MONOTONIC, &now);
  us = (now.tv_sec - log_state.start.tv_sec) * 1000000LL
       + (now.tv_nsec - log_state.start.tv_nsec) / 1000;
  log_debug ("phase %s: %lld.%03lld ms since moat started", stage, us / 1000,
             us % 1000);
}
