/* Shared by session.c (create, list, rm, reap), session_exec.c and
 * session_files.c (put, get). */
#ifndef MOAT_SESSION_INTERNAL_H
#define MOAT_SESSION_INTERNAL_H

#include <stdint.h>

#include "sandbox_internal.h"
#include "session.h"

struct container_state;

/* session.json, and the mtime of `used`. Times are wall-clock ms (they
 * outlive moat's processes). */
struct session_meta
{
  char *id;
  char *image; /* --image as given, or NULL */
  char *rootfs;
  char *workdir;    /* host path of /work, or NULL */
  int64_t uid, gid; /* --user at create, in the container (0 if none) */
  int64_t created_ms, used_ms;
  int64_t idle_timeout_ms, max_lifetime_ms;
  struct sandbox_limits lim;
};

int64_t session_now_unix_ms (void);
/* ROOT/.session/ID, or "no such session". */
int session_open (const struct moat_globals *g, const char *id, int *ret_sdfd,
                  struct moat_error **err);
int session_meta_load (int sdfd, struct session_meta *ret,
                       struct moat_error **err);
void session_meta_clear (struct session_meta *m);
void session_touch_used (int sdfd);
/* Why a session with this record and container (NULL: none) should go at
 * now, or NULL. */
const char *session_expiry (const struct session_meta *m,
                            const struct container_state *st, int64_t now);

#endif
