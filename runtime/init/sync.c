#include "sync.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "../../lib/util.h"

const char *
sync_type_name (uint32_t type)
{
  static const char *const names[] = {
    [SYNC_MAPS_DONE] = "maps-done",
    [SYNC_MOUNTS_DONE] = "mounts-done",
    [SYNC_CREATE_STATE] = "create-state",
    [SYNC_START_STATE] = "start-state",
    [SYNC_PTY] = "pty",
    [SYNC_LANDLOCK_EXEC] = "landlock-exec",
    [SYNC_SECCOMP] = "seccomp-listener",
    [SYNC_SECCOMP_SENT] = "seccomp-sent",
    [SYNC_READY] = "ready",
    [SYNC_ERROR] = "error",
    [SYNC_EXEC_GO] = "exec-go",
  };
  if (type < sizeof (names) / sizeof (names[0]) && names[type])
    return names[type];
  return "an unknown message";
}

static int
sync_unexpected (enum sync_type expect, uint32_t got, struct moat_error **err)
{
  return moat_fail (err, 0, "sync: expected %s, got %s",
                    sync_type_name (expect), sync_type_name (got));
}

int
sync_send (int fd, enum sync_type type, struct moat_error **err)
{
  struct sync_msg m = { .type = type };
  if (TEMP_FAILURE_RETRY (
          send (fd, &m, offsetof (struct sync_msg, msg), MSG_NOSIGNAL))
      < 0)
    return moat_fail (err, errno, "sync: send");
  return 0;
}

void
sync_send_error (int fd, const struct moat_error *e)
{
  struct sync_msg m = { .type = SYNC_ERROR };
  m.errnum = e ? e->errnum : 0;
  snprintf (m.msg, sizeof (m.msg), "%s",
            e && e->msg ? e->msg : "unknown error");
  (void)TEMP_FAILURE_RETRY (
      send (fd, &m, offsetof (struct sync_msg, msg) + strlen (m.msg) + 1,
            MSG_NOSIGNAL));
}

int
sync_recv (int fd, enum sync_type expect, struct moat_error **err)
{
  struct sync_msg m;
  ssize_t r;

  memset (&m, 0, sizeof (m));
  r = TEMP_FAILURE_RETRY (recv (fd, &m, sizeof (m) - 1, 0));
  if (r < 0)
    return moat_fail (err, errno, "sync: receive");
  if (r == 0)
    return moat_fail (err, 0, "container init exited during setup");
  if (m.type == SYNC_ERROR)
    {
      m.msg[sizeof (m.msg) - 1] = '\0';
      moat_fail (err, 0, "%s", m.msg);
      (*err)->errnum = m.errnum;
      return m.errnum > 0 ? -m.errnum : -1;
    }
  if (m.type != (uint32_t)expect)
    return sync_unexpected (expect, m.type, err);
  return 0;
}

int
sync_send_data (int fd, enum sync_type type, const char *data, size_t len,
                struct moat_error **err)
{
  size_t hdr = offsetof (struct sync_msg, msg);
  cleanup_free char *buf = xmalloc (hdr + len);
  struct sync_msg m = { .type = type };

  memcpy (buf, &m, hdr);
  if (len)
    memcpy (buf + hdr, data, len);
  if (TEMP_FAILURE_RETRY (send (fd, buf, hdr + len, MSG_NOSIGNAL)) < 0)
    return moat_fail (err, errno, "sync: send");
  return 0;
}

int
sync_recv_data (int fd, enum sync_type expect, char **ret,
                struct moat_error **err)
{
  size_t hdr = offsetof (struct sync_msg, msg);
  cleanup_free char *buf = NULL;
  struct sync_msg m;
  ssize_t size, r;

  size = TEMP_FAILURE_RETRY (recv (fd, NULL, 0, MSG_PEEK | MSG_TRUNC));
  if (size < 0)
    return moat_fail (err, errno, "sync: receive");
  if (size == 0)
    return moat_fail (err, 0, "container init exited during setup");
  buf = xmalloc (size + 1);
  r = TEMP_FAILURE_RETRY (recv (fd, buf, size, 0));
  if (r < 0)
    return moat_fail (err, errno, "sync: receive");
  if ((size_t)r < hdr)
    return moat_fail (err, 0, "sync: short message");
  buf[r] = '\0';
  memcpy (&m, buf, hdr);
  if (m.type == SYNC_ERROR)
    {
      moat_fail (err, 0, "%s", buf + hdr);
      (*err)->errnum = m.errnum;
      return m.errnum > 0 ? -m.errnum : -1;
    }
  if (m.type != (uint32_t)expect)
    return sync_unexpected (expect, m.type, err);
  *ret = xstrdup (buf + hdr);
  return 0;
}
