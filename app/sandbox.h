/* moat sandbox: one untrusted command in a throw-away container, built on
 * create/start/wait/delete, with a deadline, output caps and a result
 * record. Everything it makes lives under ROOT/.sandbox/ID (the bundle)
 * and ROOT/ID (the container's state); both go when it ends. */
#ifndef MOAT_SANDBOX_H
#define MOAT_SANDBOX_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../runtime/container.h"
#include "../lib/error.h"

/* Defaults, in the README and moat(1): a command that hangs or floods
 * must not hold its caller forever. */
#define SANDBOX_DEFAULT_TIMEOUT_MS (10LL * 60 * 1000)
#define SANDBOX_DEFAULT_OUTPUT_LIMIT (16LL * 1024 * 1024)

struct sandbox_opts
{
  const char *rootfs;  /* --rootfs DIR */
  const char *image;   /* --image DIR (OCI image layout) */
  bool host_usr;       /* --host-usr: an empty root with the host's /usr, ro */
  const char *workdir; /* --workdir HOST_DIR -> /work, rw, exec */
  char **ro_binds;     /* --ro-bind SRC:DST */
  char **env;          /* --env K=V */
  const char *stdin_file; /* --stdin FILE (default /dev/null) */
  int64_t memory;         /* --memory bytes, -1 unset */
  int64_t pids;           /* --pids, -1 unset */
  int64_t cpus_milli;     /* --cpus in thousandths of a CPU, -1 unset */
  int64_t timeout_ms;     /* --timeout, -1: SANDBOX_DEFAULT_TIMEOUT_MS */
  int64_t output_limit;   /* --output-limit bytes per stream, -1: default */
  int64_t uid, gid;       /* --user UID[:GID] in the container, -1 unset */
  int stderr_fd; /* --stderr-fd: where CMD's stderr goes (moat's stays on
                    2, apart), 0: moat's stderr */
  const char *result_file; /* --result FILE */
  bool json;               /* --json: the record on stdout at the end */
  bool all_overrides; /* --all-overrides: the profile's standing ones too */
  char **argv;        /* CMD ARG... */
  const char *base_config; /* moat spec's template config.json */
  char *id_buf;            /* [32]: the id it got, for the caller */
};

/* Run it; *ret_status is what moat exits with: CMD's status, 128+signal,
 * 124 when the deadline killed it. */
int sandbox_run (const struct moat_globals *g, const struct sandbox_opts *o,
                 int *ret_status, struct moat_error **err);

/* Remove what sandboxes whose moat died left behind (their container,
 * cgroup and bundle). Called by every sandbox invocation. */
void sandbox_reap_stale (const struct moat_globals *g);

/* The image cache (ROOT/.images): list entries, remove unused ones. */
int sandbox_cache_list (const struct moat_globals *g, FILE *out,
                        struct moat_error **err);
int sandbox_cache_prune (const struct moat_globals *g, FILE *out,
                         struct moat_error **err);

/* "2s", "500ms", "1m", "1.5" (seconds) -> milliseconds. */
int sandbox_parse_duration (const char *s, int64_t *ret_ms);

#endif
