/* G11: one JSON line per verb. The line is built whole in memory and
 * appended with a single write(2) on an O_APPEND fd, so lines of verbs
 * running at the same time never interleave. The caller decides whether a
 * failed write fails the verb (create, run and exec should: fail closed). */
#include "audit.h"
#include "log/log.h"
#include "sha256.h"
#include "../lib/util.h"
#include "../oci/json.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What the profile said no to: a refusal, or an annotation it ignored. */
static bool
is_refusal (const struct override *o)
{
  return o->kind == OVERRIDE_REFUSED || o->kind == OVERRIDE_IGNORED;
}

/* A limit asked above the profile and lowered: config.json or update gave
 * a number ("unlimited" and "unset" are the profile filling a gap). */
static bool
is_clamp (const struct override *o)
{
  return o->kind == OVERRIDE_CHANGED
         && strncmp (o->path, "linux.resources.", 16) == 0
         && strcmp (o->path, "linux.resources.devices") != 0 && o->asked
         && strcmp (o->asked, "unlimited") != 0
         && strcmp (o->asked, "unset") != 0;
}

static char *
audit_line (const struct audit_record *r)
{
  struct json_writer *w = json_writer_new (false);
  char now[64];
  char *json, *line;
  bool refused = false;

  for (size_t i = 0; r->overrides && i < r->overrides->n; i++)
    refused |= is_refusal (&r->overrides->v[i]);
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
  jw_key (w, "uid");
  jw_int (w, getuid ());
  jw_key (w, "pid");
  jw_int (w, getpid ());
  jw_key (w, "ppid");
  jw_int (w, getppid ());
  if (r->config_digest)
    {
      jw_key (w, "config_digest");
      jw_string (w, r->config_digest);
    }
  if (r->command)
    {
      jw_key (w, "command");
      jw_string (w, r->command);
    }
  if (r->exit_status >= 0)
    {
      jw_key (w, "exit_status");
      jw_int (w, r->exit_status);
    }
  if (r->outcome)
    {
      jw_key (w, "outcome");
      jw_raw (w, r->outcome);
    }
  jw_key (w, "result");
  jw_string (w, r->result == 0 ? "ok" : "error");
  if (r->result != 0)
    {
      jw_key (w, "error");
      jw_string (w, r->error ? r->error : "unknown error");
    }
  jw_key (w, "refused");
  jw_bool (w, refused);
  jw_key (w, "network_guard");
  jw_string (w, r->mechanism);
  if (r->effective)
    {
      jw_key (w, "effective");
      jw_raw (w, r->effective);
    }
  if (r->refused_connects)
    {
      jw_key (w, "refused_connects");
      jw_raw (w, r->refused_connects);
    }
  if (r->landlock)
    {
      jw_key (w, "landlock");
      jw_string (w, r->landlock);
    }
  if (r->userns)
    {
      jw_key (w, "userns");
      jw_string (w, r->userns);
    }
  if (r->userns_joined)
    {
      jw_key (w, "userns_joined");
      jw_string (w, r->userns_joined);
    }
  jw_overrides (w, "overrides", r->overrides);
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
  if ((size_t)n != len)
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

/* Device nodes or device cgroup rules the profile would not give. */
static bool
is_device_refusal (const struct override *o)
{
  return (o->kind == OVERRIDE_REMOVED && strcmp (o->path, "linux.devices") == 0)
         || (o->kind == OVERRIDE_CHANGED
             && strcmp (o->path, "linux.resources.devices") == 0);
}

/* A sysctl the profile does not allow: a host one (kernel.core_pattern)
 * would reach past the container. */
static bool
is_sysctl_refusal (const struct override *o)
{
  return o->kind == OVERRIDE_REMOVED
         && strncmp (o->path, "linux.sysctl.", 13) == 0;
}

void
audit_tell_clamps (const struct override_list *l, size_t *told,
                   const char *verb, const char *id)
{
  for (; l && *told < l->n; (*told)++)
    {
      const struct override *o = &l->v[*told];
      cleanup_free char *asked = NULL, *path = NULL;
      const char *why;

      /* Told with its reason at create (container_warn_ignored). */
      if (o->kind == OVERRIDE_IGNORED
          && strcmp (o->path, "annotations.run.moat.egress-allow") == 0)
        continue;
      if (o->kind == OVERRIDE_IGNORED)
        why = o->enforced ? "annotations may only tighten the profile"
                          : "not a run.moat annotation moat knows";
      else if (is_clamp (o))
        why = "above the profile's limit";
      else if (is_sysctl_refusal (o))
        why = "not among the sysctls the profile allows: moat profile show "
              "lists them";
      else if (is_device_refusal (o))
        why = "the profile allows null, zero, full, random, urandom, tty "
              "and ptmx only";
      else
        continue;
      /* A privileged config lists every host device: one line still. */
      asked = printable_text (o->asked ? o->asked : "(empty)", 300);
      path = printable_text (o->path, 300);
      fprintf (stderr, "moat: %s%s%s: warning: %s: asked %s, %s%s (%s)\n", verb,
               id ? " " : "", id ? id : "", path, asked,
               o->enforced ? "holds " : "ignored",
               o->enforced ? o->enforced : "", why);
    }
}

void
audit_debug_overrides (const struct override_list *l, const char *verb)
{
  for (size_t i = 0; l && i < l->n && log_debug_enabled (); i++)
    log_debug ("%s: override %s %s: asked %s, enforced %s", verb,
               override_kind_name (l->v[i].kind), l->v[i].path,
               l->v[i].asked ? l->v[i].asked : "-",
               l->v[i].enforced ? l->v[i].enforced : "-");
}

char *
audit_digest (const void *data, size_t len)
{
  char hex[65];
  if (sha256_hex_of (data, len, hex, NULL) < 0)
    return NULL;
  return xasprintf ("sha256:%s", hex);
}

char *
audit_file_digest (int dirfd, const char *name)
{
  cleanup_free char *text = NULL;
  size_t len;

  if (read_file_at (dirfd, name, 4u * 1024 * 1024, &text, &len) < 0)
    return NULL;
  return audit_digest (text, len);
}
