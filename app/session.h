/* moat session: a sandbox that stays, for an agent's session. `create`
 * makes a container from the sandbox's options whose init runs nothing and
 * reaps; each `exec` runs one command in it with the sandbox's deadline,
 * output caps and record, in a cgroup of its own beneath the session's (so
 * its whole process tree is counted and killed, at the deadline and when
 * the exec's moat dies); `put` and `get` copy files in and out; `rm`
 * deletes it. Everything lives under ROOT/.session/ID (the bundle, the
 * session's record) and ROOT/ID (the container's state). Sessions idle or
 * alive past their limits are removed by the next session or sandbox
 * invocation. */
#ifndef MOAT_SESSION_H
#define MOAT_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sandbox.h"

/* Defaults, in the README and moat(1). */
#define SESSION_IDLE_TIMEOUT_MS (30LL * 60 * 1000)
#define SESSION_MAX_LIFETIME_MS (12LL * 3600 * 1000)

struct session_create_opts
{
  struct sandbox_opts sb;  /* rootfs/image, workdir, binds, env, limits */
  int64_t idle_timeout_ms; /* -1: the default */
  int64_t max_lifetime_ms; /* -1: the default */
  bool json;               /* print {"id": ...} instead of the id */
  char *id_buf;            /* [32]: the id it got, for the caller */
};

struct session_exec_opts
{
  const char *id;
  char **argv;
  char **env;       /* --env K=V, added */
  const char *cwd;  /* --cwd DIR (default: the session's) */
  const char *user; /* --user UID[:GID] (default: the session's) */
  const char *stdin_file;
  int64_t timeout_ms;   /* -1: the default */
  int64_t output_limit; /* -1: the default */
  const char *result_file;
  int stderr_fd; /* --stderr-fd, as sandbox_opts' */
  bool json;
  bool all_overrides; /* as sandbox_opts' */
};

int session_create (const struct moat_globals *g,
                    const struct session_create_opts *o, FILE *out,
                    struct moat_error **err);
/* *ret_status as moat sandbox's: CMD's, 128+signal, 124 at the deadline. */
int session_exec (const struct moat_globals *g,
                  const struct session_exec_opts *o, int *ret_status,
                  struct moat_error **err);
/* What one put or get may make: entries (files and directories) and bytes
 * of data (a sparse file's holes are free). A tree past either is refused
 * and what the copy made of it removed. */
#define SESSION_COPY_MAX_ENTRIES 100000
#define SESSION_COPY_MAX_BYTES (1ULL << 30)
struct session_copy_limits
{
  uint64_t max_entries;
  uint64_t max_bytes;
};

int session_put (const struct moat_globals *g, const char *id,
                 const char *host_path, const char *dest,
                 const struct session_copy_limits *limits,
                 struct moat_error **err);
int session_get (const struct moat_globals *g, const char *id, const char *src,
                 const char *host_path,
                 const struct session_copy_limits *limits,
                 struct moat_error **err);
int session_list (const struct moat_globals *g, bool json, FILE *out,
                  struct moat_error **err);
/* An id that does not exist is not an error. */
int session_rm (const struct moat_globals *g, const char *id,
                struct moat_error **err);
/* Remove sessions past their idle timeout or lifetime, and those whose
 * container died; leave the busy ones. create, list, rm and sandbox reap
 * them all; exec, put and get only their own session (their cost must not
 * grow with the number of sessions). */
void session_reap_expired (const struct moat_globals *g);
void session_reap_one (const struct moat_globals *g, const char *id);

#endif
