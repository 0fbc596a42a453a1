/* G11: one JSON line per verb. The line is built whole in memory and
 * appended with a single write(2) on an O_APPEND fd, so lines of verbs
 * running at the same time never interleave. The caller decides whether a
 * failed write fails the verb (create, run and exec should: fail closed). */
#include "audit.h"
#include "util.h"
#include "../oci/json.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

static void
write_override (struct json_writer *w, const struct override *o)
{
  jw_object_begin (w);
  jw_key (w, "kind");
  jw_string (w, override_kind_name (o->kind));
  jw_key (w, "path");
  jw_string (w, o->path);
  jw_key (w, "asked");
  jw_string (w, o->asked);
  jw_key (w, "enforced");
  jw_string (w, o->enforced);
  jw_object_end (w);
}

static char *
audit_line (const struct audit_record *r)
{
  struct json_writer *w = json_writer_new (false);
  char now[64];
  char *json, *line;

  now_rfc3339 (now, sizeof (now));
  jw_object_begin (w);
  jw_key (w, "time");
  jw_string (w, now);
  jw_key (w, "verb");
  jw_string (w, r->verb);
  jw_key (w, "id");
  jw_string (w, r->id);
  jw_key (w, "bundle");
  jw_string (w, r->bundle);
  jw_key (w, "profile");
  jw_string (w, r->profile);
  jw_key (w, "result");
  jw_string (w, r->result == 0 ? "ok" : "error");
  if (r->result != 0)
    {
      jw_key (w, "error");
      jw_string (w, r->error ? r->error : "unknown error");
    }
  jw_key (w, "network_guard");
  jw_string (w, r->mechanism);
  if (r->network)
    {
      jw_key (w, "network");
      jw_raw (w, r->network);
    }
  jw_key (w, "overrides");
  jw_array_begin (w);
  for (size_t i = 0; r->overrides && i < r->overrides->n; i++)
    write_override (w, &r->overrides->v[i]);
  jw_array_end (w);
  jw_object_end (w);
  json = json_writer_finish (w);
  line = xasprintf ("%s\n", json);
  free (json);
  return line;
}

int
audit_open (const char *path, int *ret_fd, struct moat_error **err)
{
  cleanup_free char *dir = NULL;
  char *slash;
  int ret, fd;

  if (path == NULL || path[0] != '/')
    return moat_fail (err, EINVAL, "audit log %s: not an absolute path",
                      path ? path : "(none)");
  dir = xstrdup (path);
  slash = strrchr (dir, '/');
  if (slash != dir)
    {
      *slash = '\0';
      ret = mkdir_p (dir, 0700);
      if (ret < 0)
        return moat_fail (err, -ret, "creating audit log directory %s", dir);
    }
  fd = open (path,
             O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY,
             0600);
  if (fd < 0)
    return moat_fail (err, errno, "opening audit log %s", path);
  *ret_fd = fd;
  return 0;
}

int
audit_write_fd (int fd, const struct audit_record *r, struct moat_error **err)
{
  cleanup_free char *line = audit_line (r);
  size_t len = strlen (line);
  ssize_t n;

  do
    n = write (fd, line, len);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return moat_fail (err, errno, "writing audit log");
  if ((size_t) n != len)
    return moat_fail (err, ENOSPC, "writing audit log: short write");
  return 0;
}

int
audit_write (const char *path, const struct audit_record *r,
             struct moat_error **err)
{
  cleanup_close int fd = -1;
  int ret = audit_open (path, &fd, err);
  if (ret < 0)
    return ret;
  ret = audit_write_fd (fd, r, err);
  if (ret < 0)
    return moat_error_wrap (err, "%s", path);
  return 0;
}
