/* Seccomp agents (Podman's, LXD-style syscall interception): the engine's
 * filter may answer some syscalls with SCMP_ACT_NOTIFY, for an agent on the
 * host that listens at linux.seccomp.listenerPath. The init loads that
 * filter with a new listener at the end of create and hands the listener
 * to moat, which sends it to the agent with the container's state, as the
 * runtime spec says: one connection, one message, the fd by SCM_RIGHTS.
 * Which agent may get it is the policy's verdict
 * (profile_check_seccomp_agent), given before the decision is saved. moat's
 * built-in filter stays stacked above the engine's: the kernel takes the
 * most restrictive answer, so a syscall moat refuses never reaches the
 * agent. */
#include "seccomp_agent.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../oci/json.h"
#include "init/sync.h"
#include "init/terminal.h"
#include "../lib/util.h"

int
seccomp_agent_send (const struct spec_seccomp *s, int listener, pid_t pid,
                    const char *state_json, struct moat_error **err)
{
  struct json_writer *w = json_writer_new (false);
  cleanup_free char *msg = NULL;
  cleanup_close int sock = -1;
  int r;

  jw_object_begin (w);
  jw_key (w, "ociVersion");
  jw_string (w, "1.0.2");
  jw_key (w, "fds");
  jw_array_begin (w);
  jw_string (w, "seccompFd");
  jw_array_end (w);
  jw_key (w, "pid");
  jw_int (w, pid);
  jw_key (w, "metadata");
  jw_string (w, s->listener_metadata ? s->listener_metadata : "");
  jw_key (w, "state");
  jw_raw (w, state_json);
  jw_object_end (w);
  msg = json_writer_finish (w);

  sock = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0)
    return moat_fail (err, errno, "seccomp agent %s: socket", s->listener_path);
  r = unix_connect_path (sock, s->listener_path);
  if (r < 0)
    return moat_fail (err, -r, "connecting to the seccomp agent at %s",
                      s->listener_path);
  r = fd_send_payload (sock, listener, msg, strlen (msg), err);
  if (r < 0)
    return moat_error_wrap (err, "seccomp agent %s", s->listener_path);
  return 0;
}

int
seccomp_agent_relay (int sync, const struct seccomp_prog *prog,
                     const struct spec_seccomp *s, pid_t pid,
                     const char *state_json, struct moat_error **err)
{
  cleanup_close int listener = -1;
  int r;

  if (!(prog->flags & SECCOMP_FILTER_FLAG_NEW_LISTENER))
    return 0;
  r = sync_recv (sync, SYNC_SECCOMP, err);
  if (r == 0)
    r = fd_recv (sync, &listener, err);
  if (r == 0)
    r = seccomp_agent_send (s, listener, pid, state_json, err);
  if (r == 0)
    r = sync_send (sync, SYNC_SECCOMP_SENT, err);
  return r;
}
