/* Seccomp agents: linux.seccomp.listenerPath (seccomp_agent.c). */
#ifndef MOAT_SECCOMP_AGENT_H
#define MOAT_SECCOMP_AGENT_H

#include <sys/types.h>

#include "../lib/error.h"
#include "seccomp/seccomp.h"
#include "../oci/spec.h"

/* Send the listener fd and the container process state (state_json: the
 * container's OCI state) to the agent at s->listener_path. */
int seccomp_agent_send (const struct spec_seccomp *s, int listener, pid_t pid,
                        const char *state_json, struct moat_error **err);
/* moat's side of create, for a filter with a listener: receive it from
 * the init (SYNC_SECCOMP), send it to the agent, let the init go on. */
int seccomp_agent_relay (int sync, const struct seccomp_prog *prog,
                         const struct spec_seccomp *s, pid_t pid,
                         const char *state_json, struct moat_error **err);

#endif
