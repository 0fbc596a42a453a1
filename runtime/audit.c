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
#include <stddef.h>
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

/* The line's fields, in the order written. Most are the record's own
 * strings (an optional one is left out when NULL, a JSON one is copied
 * as it is); the others are computed when written. */
enum audit_field_kind
{
  FIELD_TEXT,     /* a string of the record, null when NULL */
  FIELD_TEXT_OPT, /* a string of the record, left out when NULL */
  FIELD_JSON_OPT, /* JSON text of the record, left out when NULL */
  FIELD_TIME,     /* now, RFC 3339 */
  FIELD_UID,      /* moat's uid, pid and parent */
  FIELD_PID,
  FIELD_PPID,
  FIELD_EXIT,      /* the container's exit status, left out when unknown */
  FIELD_RESULT,    /* "ok" or "error" */
  FIELD_ERROR,     /* the error's text, only when failed */
  FIELD_REFUSED,   /* whether any override is a refusal */
  FIELD_OVERRIDES, /* every override */
};

struct audit_field
{
  const char *key;
  enum audit_field_kind kind;
  size_t offset; /* of the record's const char *, for the string kinds */
};

#define RECORD_TEXT(kind, member)                                              \
  {                                                                            \
#member, kind, offsetof(struct audit_record, member)                       \
  }
#define COMPUTED(key, kind)                                                    \
  {                                                                            \
    key, kind, 0                                                               \
  }

static const struct audit_field audit_fields[] = {
  COMPUTED ("time", FIELD_TIME),
  RECORD_TEXT (FIELD_TEXT, verb),
  RECORD_TEXT (FIELD_TEXT, id),
  RECORD_TEXT (FIELD_TEXT, bundle),
  RECORD_TEXT (FIELD_TEXT, profile),
  COMPUTED ("uid", FIELD_UID),
  COMPUTED ("pid", FIELD_PID),
  COMPUTED ("ppid", FIELD_PPID),
  RECORD_TEXT (FIELD_TEXT_OPT, config_digest),
  RECORD_TEXT (FIELD_TEXT_OPT, command),
  COMPUTED ("exit_status", FIELD_EXIT),
  RECORD_TEXT (FIELD_JSON_OPT, outcome),
  COMPUTED ("result", FIELD_RESULT),
  COMPUTED ("error", FIELD_ERROR),
  COMPUTED ("refused", FIELD_REFUSED),
  { "network_guard", FIELD_TEXT, offsetof (struct audit_record, mechanism) },
  RECORD_TEXT (FIELD_JSON_OPT, effective),
  RECORD_TEXT (FIELD_JSON_OPT, refused_connects),
  RECORD_TEXT (FIELD_TEXT_OPT, landlock),
  RECORD_TEXT (FIELD_TEXT_OPT, userns),
  RECORD_TEXT (FIELD_TEXT_OPT, userns_joined),
  COMPUTED ("overrides", FIELD_OVERRIDES),
};

static const char *
record_text (const struct audit_record *r, const struct audit_field *f)
{
  return *(const char *const *)((const char *)r + f->offset);
}

static bool
has_refusal (const struct override_list *l)
{
  for (size_t i = 0; l && i < l->n; i++)
    if (is_refusal (&l->v[i]))
      return true;
  return false;
}

/* Whether f is written at all for r. */
static bool
field_present (const struct audit_record *r, const struct audit_field *f)
{
  switch (f->kind)
    {
    case FIELD_TEXT_OPT:
    case FIELD_JSON_OPT:
      return record_text (r, f) != NULL;
    case FIELD_EXIT:
      return r->exit_status >= 0;
    case FIELD_ERROR:
      return r->result != 0;
    default:
      return true;
    }
}

static void
write_field (struct json_writer *w, const struct audit_record *r,
             const struct audit_field *f)
{
  char now[64];

  switch (f->kind)
    {
    case FIELD_TEXT:
    case FIELD_TEXT_OPT:
      jw_string (w, record_text (r, f));
      break;
    case FIELD_JSON_OPT:
      jw_raw (w, record_text (r, f));
      break;
    case FIELD_TIME:
      now_rfc3339 (now, sizeof (now));
      jw_string (w, now);
      break;
    case FIELD_UID:
      jw_int (w, getuid ());
      break;
    case FIELD_PID:
      jw_int (w, getpid ());
      break;
    case FIELD_PPID:
      jw_int (w, getppid ());
      break;
    case FIELD_EXIT:
      jw_int (w, r->exit_status);
      break;
    case FIELD_RESULT:
      jw_string (w, r->result == 0 ? "ok" : "error");
      break;
    case FIELD_ERROR:
      jw_string (w, r->error ? r->error : "unknown error");
      break;
    case FIELD_REFUSED:
      jw_bool (w, has_refusal (r->overrides));
      break;
    case FIELD_OVERRIDES:
      break; /* jw_overrides writes its own key */
    }
}

static char *
audit_line (const struct audit_record *r)
{
  struct json_writer *w = json_writer_new (false);
  char *json, *line;

  jw_object_begin (w);
  for (size_t i = 0; i < sizeof (audit_fields) / sizeof (audit_fields[0]); i++)
    {
      const struct audit_field *f = &audit_fields[i];
      if (f->kind == FIELD_OVERRIDES)
        jw_overrides (w, f->key, r->overrides);
      else if (field_present (r, f))
        {
          jw_key (w, f->key);
          write_field (w, r, f);
        }
    }
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
      const char *why, *holds = o->enforced;

      /* Told with its reason at create (container_warn_ignored). */
      if (o->kind == OVERRIDE_IGNORED
          && strcmp (o->path, "annotations.run.moat.egress-allow") == 0)
        continue;
      /* A resource this host has no file for (cgroup_take_ignored): the
       * reason is the host's. */
      if (o->kind == OVERRIDE_IGNORED
          && strncmp (o->path, "linux.resources.", 16) == 0)
        {
          why = o->enforced ? o->enforced : "this host cannot apply it";
          holds = NULL;
        }
      else if (o->kind == OVERRIDE_IGNORED)
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
               holds ? "holds " : "ignored", holds ? holds : "", why);
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
