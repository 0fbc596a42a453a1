/* Shared by sandbox.c (the run), sandbox_config.c (its config.json and
 * limits) and sandbox_io.c (the output pumps). */
#ifndef MOAT_SANDBOX_INTERNAL_H
#define MOAT_SANDBOX_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "../runtime/cgroup/cgroup.h"
#include "../runtime/seccomp/seccomp_refusals.h"
#include "../policy/profile.h"
#include "image.h"
#include "sandbox.h"

struct sandbox_stream
{
  int fd;      /* the pipe's read end, -1 at EOF */
  int out;     /* where passed bytes go (moat's stdout/stderr), -1: nowhere */
  int devnull; /* splice target for dropped bytes */
  int64_t limit;
  uint64_t bytes;   /* passed on */
  uint64_t dropped; /* read past the limit and thrown away */
  char last_byte;   /* of those passed on: --json starts on a new line */
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
 * mounts and limits; the image's Env and WorkingDir (img, may be NULL)
 * where the caller gave none. */
int sandbox_config (const struct sandbox_opts *o, const char *rootfs,
                    const struct sandbox_limits *lim,
                    const struct image_config *img, char **ret_json,
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
  struct seccomp_refusals refusals; /* the payload's, by syscall name */
};

/* What a sandbox or a session is made of before its container exists:
 * the binds resolved, the rootfs (an image unpacked), the limits, the
 * config.json, and the operator configuration with the caller's --workdir as a
 * volume. */
struct sandbox_prep
{
  char *workdir;
  char **pairs; /* --ro-bind: src, dst, ... */
  char *rootfs;
  char *digest; /* the image's, NULL with --rootfs */
  struct image_config img;
  int64_t uid, gid; /* the process's: --user, else the image's User, else 0 */
  char *config;
  int imglock;
  struct sandbox_limits lim;
  /* The operator's configuration with the caller's --workdir as a volume. */
  struct operator_config *operator_config;
};

/* --workdir: its real path, reached without following a link and judged
 * by the policy (profile_workdir_refusal); a refusal names why. */
int sandbox_workdir_resolve (const struct moat_globals *g, const char *workdir,
                             char **ret, struct moat_error **err);

/* verb: for the error message ("sandbox", "session create"). */
int sandbox_prepare (const struct moat_globals *g, const struct sandbox_opts *o,
                     const char *verb, struct override_list *ov,
                     struct sandbox_prep *ret, struct moat_error **err);
void sandbox_prep_clear (struct sandbox_prep *p);
char *sandbox_record_json (const struct moat_globals *g, const char *id,
                           const struct sandbox_opts *o,
                           const struct sandbox_run_state *rs,
                           const struct sandbox_limits *lim, const char *digest,
                           const struct override_list *ov);
/* --stdin for the payload's fd 0: /dev/null without one; "-" is moat's own
 * stdin, passed on as it is where it is a pipe or a regular file (what the
 * caller piped or redirected in; a terminal or a socket is refused); a
 * path is opened following no link, without blocking, and must be a
 * regular file or a FIFO (never a directory, device or socket of the
 * host's). */
int sandbox_stdin_open (const char *file, int *ret_fd, struct moat_error **err);
int sandbox_result_write (const char *file, const char *line,
                          struct moat_error **err);
/* --result FILE and --json (on a line of its own whatever the command's
 * stdout ended with); a deadline or an OOM kill told in one line on
 * stderr ("sandbox ID", "session exec ID"). */
int sandbox_write_record (const struct sandbox_opts *o,
                          const struct sandbox_run_state *rs, const char *what,
                          const char *json, struct moat_error **err);

/* The command's stdout and stderr pipes, and moat's own stdio while the
 * container's process is made with the pipes as its fds 0-2. */
struct sandbox_pipes
{
  int out[2], err[2];
  int saved[3];
};
/* Make the pipes and swap them (and infd) in. */
int sandbox_pipes_in (struct sandbox_pipes *p, int infd,
                      struct moat_error **err);
/* Swap moat's stdio back, keep the read ends as rs's streams. */
void sandbox_pipes_out (struct sandbox_pipes *p, struct sandbox_run_state *rs,
                        int devnull, int64_t limit, int stderr_fd);
void sandbox_streams_close (struct sandbox_run_state *rs);

/* The audit line's command, exit status and outcome (exit_code, signal,
 * timed_out, oom_killed); status is what moat exits with. */
/* What moat exits with: CMD's status, 128+signal, 124 at the deadline. */
int sandbox_exit_status (const struct sandbox_run_state *rs);
void sandbox_audit_outcome (const struct moat_globals *g, const char *arg0,
                            const struct sandbox_run_state *rs, int status);

/* sandbox.c */
int64_t sandbox_now_ms (void); /* CLOCK_MONOTONIC */
int64_t sandbox_now_ns (void);
/* ROOT/name (.sandbox, .session), made if missing. */
int sandbox_dir_open (const struct moat_globals *g, const char *name, int *ret,
                      struct moat_error **err);
/* Delete the container and the bundle of sandbox id. */
void sandbox_remove (const struct moat_globals *g, int sbfd, const char *id);
/* dirfd/name, made unnamed, flock()ed, then linked in: nobody ever sees
 * it unlocked. */
int lock_file_make (int dirfd, const char *name, int *ret,
                    struct moat_error **err);
/* A new PREFIX-<random> bundle dir in sbfd, its lock file held. */
int sandbox_bundle_make (int sbfd, const char *prefix, char *ret_id,
                         int *ret_lockfd, int *ret_bfd,
                         struct moat_error **err);
/* A child, out of moat's session, that calls on_moat_death(arg) when the
 * returned pipe end closes without a byte written to it first (moat died,
 * even by SIGKILL). It closes the n_drop fds of drop (moat's, which must
 * not outlive it: a pipe's write end, a socket whose EOF tells moat's
 * death). */
int watchdog_start (void (*on_moat_death) (const void *arg), const void *arg,
                    const int *drop, size_t n_drop, struct moat_error **err);
int sandbox_watchdog_start (const struct moat_globals *g, int sbfd,
                            const char *id, struct moat_error **err);
int sandbox_stdio_swap_in (int in, int out, int errw, int saved[3],
                           struct moat_error **err);
void sandbox_stdio_swap_out (int saved[3]);
void sandbox_run_loop (struct sandbox_run_state *rs, struct cgroup *cg,
                       int64_t timeout_ms);

#endif
