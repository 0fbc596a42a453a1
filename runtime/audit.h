/* G11: one JSON line per verb, appended (O_APPEND, one write) to the audit
 * log: time, verb, id, bundle, profile, result, overrides and refusals. */
#ifndef MOAT_AUDIT_H
#define MOAT_AUDIT_H

#include "../policy/profile.h"

struct audit_record
{
  const char *verb;
  const char *id;               /* may be NULL */
  const char *bundle;           /* may be NULL */
  const char *profile;          /* may be NULL */
  const char *mechanism;        /* "cgroup-bpf" / "fallback" ..., may be NULL */
  const char *effective;        /* create: the effective profile's audited
                                   fields (JSON, the field table's), may be NULL */
  const char *refused_connects; /* delete: the refusals (JSON), may be NULL */
  const char *landlock;         /* G14, create and exec; may be NULL */
  const char *userns; /* G12, create: the pool's block held; may be NULL */
  const char *userns_joined; /* G12, create: whose namespace; may be NULL */
  const struct override_list *overrides; /* may be NULL */
  int result;                            /* 0 ok, else failed */
  const char *error;                     /* message when failed */
  int exit_status;           /* the container's (run, delete), -1 unknown */
  const char *config_digest; /* "sha256:HEX" of config.json, may be NULL */
  const char *command;       /* exec, sandbox, session exec: args[0] */
  const char *outcome;       /* sandbox, session exec: how it ended (JSON) */
};

/* Open (creating it and its directory) for appending: verbs that start
 * processes open it before they act, so they fail closed. */
int audit_open (const char *path, int *ret_fd, struct moat_error **err);
/* Append one line to an fd from audit_open, in a single write. */
int audit_write_fd (int fd, const struct audit_record *r,
                    struct moat_error **err);
/* Append one line to path (creating its directory, mode 0600/0700). */
int audit_write (const char *path, const struct audit_record *r,
                 struct moat_error **err);

/* Tell on stderr, one line each, the overrides from index *told on that
 * are a clamp (a limit config.json or update asked above the profile), a
 * device node or device rule refused, or an ignored annotation:
 * "moat: VERB ID: warning: PATH: asked X, holds Y (why)". Routine
 * hardening (a mount added, a namespace made) is not told; the audit log
 * has it all. */
void audit_tell_clamps (const struct override_list *l, size_t *told,
                        const char *verb, const char *id);
/* Each override, in the --debug log. */
void audit_debug_overrides (const struct override_list *l, const char *verb);
/* "sha256:HEX" of data, or of the file at dirfd/name (NULL if
 * unreadable, or if nettle cannot be loaded). */
char *audit_digest (const void *data, size_t len);
char *audit_file_digest (int dirfd, const char *name);

#endif
