/* File descriptors passed over unix sockets (SCM_RIGHTS). */
#ifndef MOAT_FDPASS_H
#define MOAT_FDPASS_H

#include <stddef.h>

#include "error.h"

/* Send fd over a unix socket with SCM_RIGHTS, with len bytes of data. */
int fd_send_payload (int sock, int fd, const void *data, size_t len,
                     struct moat_error **err);
/* connect() to a unix socket path of any length; -errno on failure. */
int unix_connect_path (int sock, const char *path);
/* Send fd over a unix socket with SCM_RIGHTS (one byte of data). */
int fd_send (int sock, int fd, struct moat_error **err);
/* Receive one fd sent with fd_send (MSG_CMSG_CLOEXEC). */
int fd_recv (int sock, int *ret_fd, struct moat_error **err);

#endif
