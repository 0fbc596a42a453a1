/* The container lifecycle: what each verb does. cmd/ parses flags into these
 * structs and calls one function; no verb file touches a mount or a
 * namespace. */
#ifndef MOAT_CONTAINER_H
#define MOAT_CONTAINER_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "error.h"
#include "../oci/spec.h"

struct profile;
struct override_list;

/* What a verb reports for the audit line (G11); filled as it goes. */
struct verb_audit
{
  char *bundle;
  const char *mechanism;            /* network guard used */
  char *network;                    /* create: its network lists (JSON) */
  struct override_list *overrides;  /* owned by the caller */
};

/* Global flags, and the profile main() loaded. */
struct moat_globals
{
  const char *root;        /* --root, default /run/moat */
  const char *profile_name; /* --profile NAME (NULL: operator config/strict) */
  const char *config;      /* --config FILE (NULL: /etc/moat/config.json) */
  bool systemd_cgroup;
  bool debug;
  const struct profile *profile;
  struct verb_audit *audit;
};

struct create_opts
{
  const char *id;
  const char *bundle;         /* NULL: cwd */
  const char *pid_file;
  const char *console_socket;
  bool no_pivot;
  bool no_new_keyring;
  int preserve_fds;
  bool detach;                /* run only */
  bool keep;                  /* run only: don't delete after exit */
};

struct exec_opts
{
  const char *id;
  const char *process_file;   /* --process */
  char **argv;                /* command line (when no --process) */
  const char *console_socket;
  const char *pid_file;
  const char *cwd;
  char **env;                 /* --env, appended */
  const char *user;           /* --user UID[:GID] */
  bool tty;
  bool detach;
  int preserve_fds;
};

struct update_opts
{
  const char *id;
  const char *resources_file; /* "-" = stdin */
  struct spec_resources res;  /* from single flags */
};

/* Is id acceptable ([A-Za-z0-9][A-Za-z0-9_.+-]*, <= 1024)? */
int container_id_check (const char *id, struct moat_error **err);

int container_create (const struct moat_globals *g,
                      const struct create_opts *o, struct moat_error **err);
int container_start (const struct moat_globals *g, const char *id,
                     struct moat_error **err);
/* create + start + wait: *ret_status is the exit code to return (128+sig). */
int container_run (const struct moat_globals *g, const struct create_opts *o,
                   int *ret_status, struct moat_error **err);
int container_state (const struct moat_globals *g, const char *id,
                     char **ret_json, struct moat_error **err);
int container_kill (const struct moat_globals *g, const char *id, int sig,
                    bool all, struct moat_error **err);
int container_delete (const struct moat_globals *g, const char *id,
                      bool force, struct moat_error **err);
int container_list (const struct moat_globals *g, bool json, FILE *out,
                    struct moat_error **err);
int container_exec (const struct moat_globals *g, const struct exec_opts *o,
                    int *ret_status, struct moat_error **err);
int container_ps (const struct moat_globals *g, const char *id, bool json,
                  FILE *out, struct moat_error **err);
int container_pause (const struct moat_globals *g, const char *id,
                     bool pause, struct moat_error **err);
int container_update (const struct moat_globals *g,
                      const struct update_opts *o, struct moat_error **err);
int container_events (const struct moat_globals *g, const char *id,
                      bool stats, int interval, FILE *out,
                      struct moat_error **err);

/* Parse "9", "KILL", "SIGKILL", "sigkill" -> signal number. */
int signal_parse (const char *s, int *ret);

#endif
