/* Small helpers used everywhere: cleanup attributes, safe integer parsing,
 * whole-file I/O. Library code never logs; it returns errors. */
#ifndef MOAT_UTIL_H
#define MOAT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "error.h"

static inline void
cleanup_freep (void *p)
{
  void **pp = (void **)p;
  free (*pp);
}
static inline void
cleanup_closep (int *fd)
{
  if (*fd >= 0)
    close (*fd);
}
static inline void
cleanup_fclosep (FILE **f)
{
  if (*f)
    fclose (*f);
}
void cleanup_strvp (char ***v);
static inline void
cleanup_errorp (struct moat_error **e)
{
  moat_error_free (e);
}

#define cleanup_free __attribute__ ((cleanup (cleanup_freep)))
#define cleanup_close __attribute__ ((cleanup (cleanup_closep)))
#define cleanup_fclose __attribute__ ((cleanup (cleanup_fclosep)))
#define cleanup_strv __attribute__ ((cleanup (cleanup_strvp)))
#define cleanup_error __attribute__ ((cleanup (cleanup_errorp)))

/* Hand ownership on: returns *pp and sets *pp to NULL (or fd to -1). */
#define steal_pointer(pp)                                                      \
  ({                                                                           \
    __typeof__ (*(pp)) _p = *(pp);                                             \
    *(pp) = NULL;                                                              \
    _p;                                                                        \
  })
static inline int
steal_fd (int *fd)
{
  int r = *fd;
  *fd = -1;
  return r;
}

/* Closes *fd if open and marks it closed. */
static inline void
close_if_open (int *fd)
{
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
}

/* Closes the open ones of n fds (-1 skipped) and frees the array. */
void close_fd_array (int *fds, size_t n);

/* Allocation failure is fatal (prints and _exit(1)): these never return NULL.
 */
void *xmalloc (size_t n);
void *xcalloc (size_t n, size_t m);
void *xrealloc (void *p, size_t n);
char *xstrdup (const char *s);
char *xasprintf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* NULL-terminated string vectors. */
size_t strv_len (char *const *v);
void strv_free (char **v);
char **strv_dup (char *const *v);
void strv_append (char ***v, const char *s); /* copies s */

/* Safe integer parsing: whole string, base 10, range-checked.
 * Return 0 or -EINVAL / -ERANGE. */
int parse_int64 (const char *s, int64_t *ret);
int parse_uint64 (const char *s, uint64_t *ret);
int parse_int (const char *s, int *ret);

/* Read a whole file (at most max bytes, else -EFBIG). NUL-terminated. */
int read_file_at (int dirfd, const char *path, size_t max, char **ret,
                  size_t *ret_len);
/* The same from an open fd, to its end (no stdio: no fstat, no fcntl). */
int read_fd_all (int fd, size_t max, char **ret, size_t *ret_len);
/* Before an execve: every signal the thread ignores back to its default
 * and an empty mask. execve drops handlers and the alternate signal stack
 * but keeps SIG_IGN and the mask, and a POSIX shell cannot trap a signal
 * ignored when it started; runc and crun reset both too. Through the raw
 * syscalls, so 32 and 33, which glibc keeps for itself, are reset too. */
void reset_signal_state (void);
/* s for one line on a terminal: control characters (C0 and DEL) as \xNN,
 * so that what a pod author wrote (an annotation, a mount path) can neither
 * end the line nor send the caller's terminal an escape sequence; at most
 * max bytes of s, then "...". */
char *printable_text (const char *s, size_t max);
/* A fast 64-bit hash of len bytes, eight at a time: it names or checks a
 * file or an entry whose contents are then compared whole; no security
 * boundary. */
uint64_t hash64_words (const void *data, size_t len);
/* The same in pieces, from h = FNV1A64_INIT ^ (the whole length): every
 * piece but the last a multiple of eight bytes long. */
uint64_t hash64_words_more (uint64_t h, const void *data, size_t len);

/* 64-bit FNV-1a over len bytes, from h (FNV1A64_INIT to start; a
 * previous result to go on). The seccomp caches' keys and checksums and
 * the network guard's code hashes: not a defence (the cache files are
 * trusted only when ours, the guard's descriptions are compared whole). */
#define FNV1A64_INIT UINT64_C (0xcbf29ce484222325)
uint64_t fnv1a64 (const void *data, size_t len, uint64_t h);
/* CLOCK_MONOTONIC in microseconds, for spans of time. */
uint64_t monotonic_usec (void);
/* Write a whole buffer to an open fd, retrying on EINTR/short writes. */
int write_all (int fd, const void *buf, size_t len);
/* Read exactly len bytes of fd from offset at (its offset left alone),
 * retrying on EINTR/short reads. 0, -errno, or -ENODATA where the file
 * ends first. */
int pread_all (int fd, void *buf, size_t len, off_t at);
/* Open (O_WRONLY|O_CLOEXEC, no O_CREAT) and write s. Returns 0 or -errno. */
int write_file_at (int dirfd, const char *path, const char *s);
/* Atomically replace path (relative to dirfd): a reader sees the old or
 * the new content whole, and writers of one path at once each write their
 * own temporary file (O_TMPFILE, else a name of their own made with
 * O_EXCL), so the file ends up as one writer's whole content. A symlink at
 * path or at a temporary name is never followed; nothing is left behind on
 * failure. No fsync: every caller writes either runtime state under the
 * state root (a tmpfs /run on systemd hosts; on a persistent root a crash
 * kills the containers too, and a file left empty fails closed: the verbs
 * refuse it, `delete --force` removes it) or a cache that checks what it
 * reads (the seccomp caches' checksums, the image cache's parse), and an
 * fsync of each would cost more than the rest of the write. */
int write_file_atomic (int dirfd, const char *path, const char *data,
                       size_t len, mode_t mode);
/* --pid-file: pid in decimal (no newline), mode 0644 less the umask,
 * replaced atomically (write_file_atomic in the file's own directory) so
 * that a reader never sees it half-written. */
int write_pid_file (const char *path, pid_t pid, struct moat_error **err);

/* -1, 0 or 1 as a is earlier than, the same as or later than b. */
int timespec_cmp (const struct timespec *a, const struct timespec *b);

/* RFC3339 with nanoseconds, UTC: 2026-11-21T16:29:25.123456789Z */
void format_rfc3339 (const struct timespec *ts, char *buf, size_t len);
void now_rfc3339 (char *buf, size_t len);

/* mkdir -p relative to dirfd (or absolute); existing dirs are fine. */
int mkdir_p (const char *path, mode_t mode);

/* Undo mountinfo's octal escapes (\040 for a space ...) in place. */
void mountinfo_unescape (char *s);

/* One line of /proc/self/mountinfo split in place: its mount id, mount
 * point (unescaped), per-mount options and filesystem type; -1 where the
 * line is not one. */
struct mountinfo_entry
{
  unsigned long long id;
  char *mount_point;
  char *options;
  char *fstype;
};
int mountinfo_split (char *line, struct mountinfo_entry *ret);

/* Whether path is dir or below it, by its text ("/a/b" is below "/a", "/ab"
 * is not). */
bool path_at_or_below (const char *path, const char *dir);

/* Read a cache file whole (dirfd/path, not following a last link), if it
 * can be trusted: a regular file owned by us, writable by nobody else, of
 * min_len..max_len bytes; else -1 (a miss). */
int read_trusted_file_at (int dirfd, const char *path, size_t min_len,
                          size_t max_len, char **ret_buf, size_t *ret_len);

/* The running kernel, "RELEASE VERSION" (uname), for caches keyed by it. */
const char *kernel_identity (void);

/* A NULL-terminated vector joined with sep (newly allocated). */
char *strv_join (char *const *v, const char *sep);

/* Byte sizes as operators, annotations and flags write them: "67108864",
 * "64m", "64MiB", "1G" (binary units). 0 or -EINVAL / -ERANGE. */
int parse_byte_size (const char *s, uint64_t *ret);

/* The program's GNU build-id in hex into out (NUL-terminated, cut to
 * size); false where the program has none. It changes with the code,
 * where a version or commit string may not (a build from a tarball, a
 * patched tree). */
bool program_build_id (char *out, size_t size);
/* "moat BUILD-ID", or "moat VERSION COMMIT" where the program has no
 * build-id: what names this code in the key of a cache of what it
 * computed, so that no other build's result is taken for its own. */
const char *program_identity (void);

#endif
