/* The container lifecycle: what each verb does. cmd/ parses flags into these
 * structs and calls one function; no verb file touches a mount or a
 * namespace. */
#ifndef MOAT_CONTAINER_H
#define MOAT_CONTAINER_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "../lib/error.h"
#include "../oci/spec.h"

struct profile;
struct operator_config;
struct override_list;
struct seccomp_refusals;

/* What a verb reports for the audit line (G11); filled as it goes. */
struct verb_audit
{
  char *bundle;
  char *profile;         /* the container's, once it is known */
  const char *mechanism; /* network guard used */
  char *effective; /* create: the effective profile's audited fields (JSON) */
  char *refused_connects; /* delete: what the guard refused (JSON) */
  char *landlock;         /* G14: what the container gets */
  char *userns; /* G12, create: "0 FIRST 65536", the pool's block it holds */
  char *userns_joined; /* G12, create: whose user namespace it adopted */
  struct override_list *overrides; /* owned by the caller */
  size_t told;                     /* overrides already told on stderr */
  int exit_status;     /* the container's, when known (run, delete); -1 */
  char *config_digest; /* "sha256:..." of the config.json create used */
  char *command;       /* exec, sandbox, session exec: args[0] */
  char *outcome;       /* sandbox, session exec: how it ended (JSON) */
};

/* Global flags, and the profile main() loaded. */
struct moat_globals
{
  const char *root;         /* --root, default /run/moat */
  const char *profile_name; /* --profile NAME (NULL: operator config/strict) */
  const char *config;       /* --config FILE (NULL: /etc/moat/config.json) */
  bool systemd_cgroup;
  bool debug;
  const struct profile *profile; /* the base profile create judges under */
  /* The operator's configuration (the audit log, the image cache, the
   * trees, the G12 pool ...), apart from any container's decision. */
  const struct operator_config *operator_config;
  struct verb_audit *audit;
};

struct create_opts
{
  const char *id;
  const char *bundle; /* NULL: cwd */
  /* The spec's text in place of the bundle's config.json (the sandbox's,
   * built in memory); NULL: read BUNDLE/config.json. */
  const char *config_text;
  const char *pid_file;
  const char *console_socket;
  bool no_pivot;
  bool no_new_keyring;
  int preserve_fds;
  bool detach;     /* run only */
  bool keep;       /* run only: don't delete after exit */
  bool init_reaps; /* a session's: the init runs nothing, only reaps */
  /* Count the payload's refused syscalls (seccomp_refusals.h): moat
   * supervises it to the end. NULL: the kernel answers them. */
  struct seccomp_refusals *refusals;
};

struct container_state;

struct exec_opts
{
  const char *id;
  const char *process_file; /* --process */
  char **argv;              /* command line (when no --process) */
  const char *console_socket;
  const char *pid_file;
  const char *cwd;
  char **env;                /* --env, appended */
  const char *user;          /* --user UID[:GID] */
  uint32_t *additional_gids; /* --additional-gids, added to the user's */
  size_t n_additional_gids;
  char **cgroup_subs; /* --cgroup [CONTROLLERS:]SUB (cgroup_add_pid_sub) */
  bool tty;
  bool detach;
  int preserve_fds;
  /* A session's exec: its own cgroup, made beneath the container's (the
   * full relative path), so its whole process tree can be counted and
   * killed; and its pid, for a caller that waits itself (with detach). */
  const char *sub_cgroup;
  pid_t *ret_pid;
  /* As create_opts' (with detach: the caller waits). */
  struct seccomp_refusals *refusals;
  /* The container as its caller loaded it already (a session's exec), lent
   * with its state dir; NULL: exec loads it by id. */
  struct container_state *state;
  int state_dirfd;
  /* Called once the process is cloned, while it sets itself up; it
   * execs only after the call returned 0 (a session's watchdog is forked
   * there, so the two overlap). moat_sync_fd: moat's end of the child's
   * socket, which the callee's own children must close (its EOF is how
   * the child learns that moat is gone). */
  int (*before_execve) (void *arg, int moat_sync_fd, struct moat_error **err);
  void *before_execve_arg;
};

struct update_opts
{
  const char *id;
  const char *resources_file; /* "-" = stdin */
  struct spec_resources res;  /* from single flags */
};

/* Is id acceptable ([A-Za-z0-9][A-Za-z0-9_.+-]*, <= 1024)? */
int container_id_check (const char *id, struct moat_error **err);

int container_create (const struct moat_globals *g, const struct create_opts *o,
                      struct moat_error **err);
int container_start (const struct moat_globals *g, const char *id,
                     struct moat_error **err);
/* create + start + wait: *ret_status is the exit code to return (128+sig). */
int container_run (const struct moat_globals *g, const struct create_opts *o,
                   int *ret_status, struct moat_error **err);
int container_state (const struct moat_globals *g, const char *id,
                     char **ret_json, struct moat_error **err);
int container_kill (const struct moat_globals *g, const char *id, int sig,
                    bool all, struct moat_error **err);
int container_delete (const struct moat_globals *g, const char *id, bool force,
                      struct moat_error **err);
enum list_format
{
  LIST_TABLE,
  LIST_JSON,
  LIST_QUIET /* ids only */
};
/* Every container under g->root, sorted by id. */
int container_list (const struct moat_globals *g, enum list_format format,
                    FILE *out, struct moat_error **err);
int container_exec (const struct moat_globals *g, const struct exec_opts *o,
                    int *ret_status, struct moat_error **err);
/* ps_args (NULL-terminated; empty: -ef): run ps(1) with them and print
 * its header and the lines of the container's processes, as runc (json:
 * the pids alone). */
int container_ps (const struct moat_globals *g, const char *id, bool json,
                  char *const *ps_args, FILE *out, struct moat_error **err);
int container_pause (const struct moat_globals *g, const char *id, bool pause,
                     struct moat_error **err);
int container_update (const struct moat_globals *g, const struct update_opts *o,
                      struct moat_error **err);
int container_events (const struct moat_globals *g, const char *id, bool stats,
                      uint64_t interval_ms, FILE *out, struct moat_error **err);

/* --debug: log what the container got (namespaces, cgroup, the BPF
 * programs on it), read back after create. */
void container_debug_report (const struct moat_globals *g, const char *id);

/* moat profile explain: print every override and refusal, and every mount
 * operation in order, that creating bundle would bring; create nothing. */
int container_explain (const struct moat_globals *g, const char *bundle,
                       FILE *out, struct moat_error **err);

/* Parse "9", "KILL", "SIGKILL", "sigkill" -> signal number. */
int signal_parse (const char *s, int *ret);

#endif
