/* Shared by sandbox.c (the run), sandbox_config.c (its config.json and
 * limits) and sandbox_io.c (the output pumps). */
#ifndef MOAT_SANDBOX_INTERNAL_H
#define MOAT_SANDBOX_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "cgroup.h"
#include "../policy/profile.h"
#include "sandbox.h"

struct sandbox_stream
{
  int fd;      /* the pipe's read end, -1 at EOF */
  int out;     /* where passed bytes go (moat's stdout/stderr), -1: nowhere */
  int devnull; /* splice target for dropped bytes */
  int64_t limit;
  uint64_t bytes;   /* passed on */
  uint64_t dropped; /* read past the limit and thrown away */
  bool no_splice;
};

void sandbox_stream_init (struct sandbox_stream *s, int fd, int out,
                          int devnull, int64_t limit);
bool sandbox_stream_pump (struct sandbox_stream *s);
/* SIGALRM in ms (<= 0: none) that unblocks a write to a stuck reader. */
void sandbox_alarm_at (int64_t ms);

/* The limits the sandbox runs under: the profile's, lowered by --memory,
 * --pids, --cpus; a request above the profile is clamped, told on stderr
 * and listed in ov. */
struct sandbox_limits
{
  int64_t memory; /* bytes, -1 unlimited */
  int64_t pids;
  int64_t cpu_quota; /* us per cpu_period, -1 unlimited */
  uint64_t cpu_period;
};

void sandbox_limits (const struct profile *p, const struct sandbox_opts *o,
                     struct sandbox_limits *ret, struct override_list *ov);

/* config.json: moat spec's template with the sandbox's process, root,
 * mounts and limits. */
int sandbox_config (const struct sandbox_opts *o, const char *rootfs,
                    const struct sandbox_limits *lim, char **ret_json,
                    struct moat_error **err);

struct sandbox_run_state
{
  pid_t pid;
  int status;
  bool exited;
  bool timed_out;
  int interrupted; /* the signal moat got, 0 if none */
  int64_t started_ms, ended_ms;
  int64_t started_ns, ended_ns; /* for the record's wall time */
  struct cgroup_usage use;
  struct sandbox_stream out, err;
};

/* sandbox.c */
int64_t sandbox_now_ms (void); /* CLOCK_MONOTONIC */
int64_t sandbox_now_ns (void);
int sandbox_dir_open (const struct moat_globals *g, int *ret,
                      struct moat_error **err);
/* Delete the container and the bundle of sandbox id. */
void sandbox_remove (const struct moat_globals *g, int sbfd, const char *id);
int sandbox_bundle_make (int sbfd, char *ret_id, int *ret_lockfd, int *ret_bfd,
                         struct moat_error **err);
int sandbox_watchdog_start (const struct moat_globals *g, int sbfd,
                            const char *id, struct moat_error **err);
int sandbox_stdio_swap_in (int in, int out, int errw, int saved[3],
                           struct moat_error **err);
void sandbox_stdio_swap_out (int saved[3]);
void sandbox_run_loop (struct sandbox_run_state *rs, struct cgroup *cg,
                       int64_t timeout_ms);

#endif
