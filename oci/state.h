/* A container's state file (ROOT/ID/state.json, written atomically) and the
 * OCI state JSON that `state` prints and hooks read on stdin. */
#ifndef MOAT_STATE_H
#define MOAT_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "spec.h"
#include "../lib/error.h"

struct container_state
{
  char *id;
  char *bundle;           /* absolute */
  char *rootfs;           /* absolute */
  pid_t pid;              /* the container's init, host pid */
  uint64_t pid_starttime; /* /proc/PID/stat field 22: detects pid reuse */
  char *created;          /* RFC3339 */
  char *cgroup;           /* relative cgroup path ("/moat/ID") */
  char *profile;          /* profile name */
  char *netguard;         /* mechanism used: "cgroup-bpf", "fallback", "none" */
  uint32_t userns_host_id; /* G12: first host id of the block held, or 0 */
  bool started;            /* start has run */
  bool has_tty;
  /* G14: the paths the init granted execute on, one a line, for `moat
   * exec` (landlock.c); NULL: none, exec reads the directories itself. */
  char *landlock_exec;
  /* "sha256:HEX" of the config.json create was given, for delete's audit
   * line; NULL where create audited nothing. */
  char *config_digest;
  struct spec_kv *annotations;
  size_t n_annotations;
  const char *owner; /* list only, not saved: the state dir owner's name */
};

/* Serialize / parse moat's own state file. */
int state_to_json (const struct container_state *st, char **ret,
                   struct moat_error **err);
int state_from_json (const char *text, size_t len, struct container_state **ret,
                     struct moat_error **err);
void state_free (struct container_state *st);

/* The OCI state ("ociVersion", "id", "status", "pid", "bundle",
 * "annotations", plus "rootfs", "created", "owner" as runc prints). pretty
 * for `moat state`. pid 0 is written as 0 (stopped). */
int state_oci_json (const struct container_state *st, const char *status,
                    bool pretty, char **ret, struct moat_error **err);
/* What a hook (and a seccomp agent) reads on stdin: the runtime-spec's
 * state and nothing else, as runc writes it: "pid" left out when 0,
 * "annotations" when there are none. */
int state_hook_json (const struct container_state *st, const char *status,
                     char **ret, struct moat_error **err);

#endif
