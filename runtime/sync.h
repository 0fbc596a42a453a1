/* The one channel between moat and the container's init before exec: a
 * SOCK_SEQPACKET socketpair carrying typed messages (sync points, and the
 * child's error text), plus fds with SCM_RIGHTS. */
#ifndef MOAT_SYNC_H
#define MOAT_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include "../lib/error.h"

enum sync_type
{
  SYNC_GO = 1,      /* parent -> child: continue */
  SYNC_MOUNTS_DONE, /* child -> parent: mounts done, before pivot_root */
  SYNC_PTY,         /* child -> parent: pty master follows (fd) */
  SYNC_READY,       /* child -> parent: waiting for start */
  SYNC_ERROR,       /* child -> parent: msg holds the error, errnum set */
  SYNC_SECCOMP,     /* child -> parent: a seccomp agent's listener (fd) */
};

struct sync_msg
{
  uint32_t type;
  int32_t errnum;
  char msg[1024];
};

int sync_send (int fd, enum sync_type type, struct moat_error **err);
/* Child side: send an error (one message: the error's text). */
void sync_send_error (int fd, const struct moat_error *e);
/* Receive one message; SYNC_ERROR becomes an error return with its text.
 * EOF (the child died) gives "container init exited during setup". */
int sync_recv (int fd, enum sync_type expect, struct moat_error **err);

/* Messages with a payload (e.g. the state JSON for in-container hooks). */
int sync_send_data (int fd, enum sync_type type, const char *data, size_t len,
                    struct moat_error **err);
/* *ret is NUL-terminated and malloc'ed (may be empty). */
int sync_recv_data (int fd, enum sync_type expect, char **ret,
                    struct moat_error **err);

#endif
