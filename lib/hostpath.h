/* Host paths that a payload can influence: a file the caller names in a
 * workdir the payload wrote (--stdin, --result, session put's source,
 * session get's destination, --ro-bind sources). moat runs there as host
 * root, so such a path is opened following no link at all, not even in a
 * directory above it, and its type is checked on the open fd before use. */
#ifndef MOAT_HOSTPATH_H
#define MOAT_HOSTPATH_H

#include <sys/types.h>

#include "error.h"

/* What a refused link is told as (after "PATH: "). */
#define HOSTPATH_LINK_TEXT                                                     \
  "a symbolic link on the path; moat follows none on the host side"

/* The types hostpath_open_typed may accept. */
#define HOSTPATH_REG (1u << 0)
#define HOSTPATH_DIR (1u << 1)
#define HOSTPATH_FIFO (1u << 2)

/* Open path (absolute, or relative to the cwd) with flags (O_CLOEXEC
 * added; with O_CREAT, made with mode): openat2 with RESOLVE_NO_SYMLINKS
 * (which takes magic links along), else, where openat2 is missing, a walk
 * from "/" or "." component by component with O_NOFOLLOW. The fd, or
 * -errno: -ELOOP where any component is a link. */
int hostpath_open (const char *path, int flags, mode_t mode);

/* The walk alone (the fallback; its unit test calls it directly). */
int hostpath_open_walking (const char *path, int flags, mode_t mode);

/* hostpath_open without blocking (a FIFO with no writer, a device) and
 * without taking a controlling terminal, then its type one of types, else
 * refused: one line "WHAT: a directory; a regular file or a FIFO only".
 * O_NONBLOCK is cleared again for a regular file or FIFO. */
int hostpath_open_typed (const char *path, int flags, mode_t mode,
                         unsigned types, const char *what, int *ret_fd,
                         struct moat_error **err);

/* "a directory", "a socket", ... for a refusal's text. */
const char *hostpath_type_text (mode_t mode);

/* The text for -r from hostpath_open: the link text for -ELOOP, else
 * strerror. */
const char *hostpath_error_text (int r);

#endif
