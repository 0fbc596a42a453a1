/* Refused syscalls counted by name, where a moat process supervises the
 * container's process for its whole life (`moat sandbox`, `moat session
 * exec`).
 *
 * The built-in filter is loaded with its refusals turned into
 * SECCOMP_RET_USER_NOTIF (the errno kept in the action's data bits, which
 * the kernel ignores there) and a listener, which the process sends to the
 * supervisor before its execve. The supervisor runs the same program on
 * each notification's registers, answers with the errno the filter would
 * have given (ENOSYS or EPERM) and counts it. An allowed syscall never
 * leaves the filter: the program is the same but for its refusal returns.
 * If the supervisor is gone the kernel answers ENOSYS in its place: an
 * EPERM may become ENOSYS, nothing refused becomes allowed. */
#ifndef MOAT_SECCOMP_REFUSALS_H
#define MOAT_SECCOMP_REFUSALS_H

#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../lib/error.h"
#include "seccomp.h"

/* Distinct (arch, syscall) pairs counted by name; past them, "(others)". */
#define SECCOMP_REFUSALS_MAX 64

struct seccomp_refusal_count
{
  uint32_t arch, nr;
  uint64_t n;
};

struct seccomp_refusals
{
  bool on;
  int sock;       /* the supervisor's end: the listener comes through it */
  int child_sock; /* the process's end, until it is started */
  int listener;   /* -1 until received */
  struct seccomp_prog prog; /* the filter as loaded */
  struct seccomp_refusal_count v[SECCOMP_REFUSALS_MAX];
  size_t n;
  uint64_t others; /* refusals past the table */
};

/* Ready to supervise: the socket pair. */
int seccomp_refusals_open (struct seccomp_refusals *r, struct moat_error **err);
/* After the process is cloned: moat's copy of its end goes. */
void seccomp_refusals_started (struct seccomp_refusals *r);
void seccomp_refusals_clear (struct seccomp_refusals *r);

/* p with every SECCOMP_RET_ERRNO turned into SECCOMP_RET_USER_NOTIF (same
 * data bits) and SECCOMP_FILTER_FLAG_NEW_LISTENER set. */
void seccomp_prog_notify_refusals (const struct seccomp_prog *p,
                                   struct seccomp_prog *ret);
/* What classic BPF program p returns for d (SECCOMP_RET_KILL_PROCESS on an
 * instruction it cannot run). */
uint32_t seccomp_prog_run (const struct seccomp_prog *p,
                           const struct seccomp_data *d);

/* The built-in filter the process loads: builtin itself, or where r is
 * not NULL, builtin with its refusals sent to r (made in r->prog) and
 * *ret_sock the end the listener goes through (else -1). Not with a
 * config filter that has a listener of its own: the kernel allows one
 * listener per process. */
const struct seccomp_prog *
seccomp_supervised (struct seccomp_refusals *r,
                    const struct seccomp_prog *config,
                    const struct seccomp_prog *builtin, int *ret_sock);
/* In the process, just before execve: load p (made by
 * seccomp_prog_notify_refusals) and send its listener down sock. */
int seccomp_refusals_load (const struct seccomp_prog *p, int sock,
                           struct moat_error **err);

/* The supervisor: the fd to poll (-1: nothing more to come), and what to
 * do with the events poll saw on it. */
int seccomp_refusals_fd (const struct seccomp_refusals *r);
void seccomp_refusals_handle (struct seccomp_refusals *r, short revents);
/* {"name": count, ...}; NULL when off. */
char *seccomp_refusals_json (const struct seccomp_refusals *r);

#endif
