/* The --log file: errors always, and with --debug what moat decided and did
 * (the verb and its arguments, profile, overrides, namespaces, cgroup, BPF
 * programs, create phase timings); without --log, --debug lines go to
 * stderr in the text form, as runc's do. Text ("time=... level=... msg=...") or
 * runc's JSON lines
 * ({"level","msg","time"}: engines parse the file, so nothing else goes
 * there). Only the process that opened the log writes to it: a container's
 * init, a fork of moat, never does. */
#ifndef MOAT_LOG_H
#define MOAT_LOG_H

#include <stdbool.h>

/* Remember where to log (path NULL: nowhere). Opens nothing yet. */
void log_setup (const char *path, bool json, bool debug);
bool log_debug_enabled (void);
void log_error (const char *msg);
void log_debug (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
/* A phase reached (create's stages, the verb's end): logs its time since
 * log_setup (--debug). */
void log_phase (const char *stage);

#endif
