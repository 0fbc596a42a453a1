/* The one channel between moat and the container's init before exec: a
 * SOCK_SEQPACKET socketpair carrying typed messages (sync points, and the
 * child's error text), plus fds with SCM_RIGHTS. */
#ifndef MOAT_SYNC_H
#define MOAT_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include "../../lib/error.h"

/* Each step has a message of its own: one that arrives out of order is an
 * error naming the one expected. */
enum sync_type
{
  /* create: moat and the init */
  SYNC_MAPS_DONE = 1, /* moat -> init: maps, idmaps, rlimits done; go on
                         (the rootfs tree follows, fd, if it has one) */
  SYNC_MOUNTS_DONE,   /* init -> moat: mounts done, before pivot_root */
  SYNC_CREATE_STATE,  /* moat -> init: prestart and createRuntime hooks
                         ran; the state for createContainer hooks */
  SYNC_START_STATE,   /* moat -> init: the state for startContainer hooks */
  SYNC_PTY,           /* init or exec child -> moat: pty master (fd) */
  SYNC_LANDLOCK_EXEC, /* init -> moat: the paths G14 lets execute */
  SYNC_SECCOMP,       /* init -> moat: a seccomp agent's listener (fd) */
  SYNC_SECCOMP_SENT,  /* moat -> init: the agent has the listener */
  SYNC_READY,         /* init -> moat: waiting for start */
  SYNC_ERROR,         /* -> moat: msg holds the error, errnum set */
  SYNC_EXEC_GO,       /* moat -> exec child: execve now (exec_opts'
                         before_execve returned) */
};

/* "mounts-done", ... (for errors). */
const char *sync_type_name (uint32_t type);

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
