/* moat's own state file (ROOT/ID/state.json) and the OCI state JSON. The
 * state file is read as strictly as config.json: a truncated or edited file
 * is an error naming the member, never a half-filled struct. */
#include "state.h"

#include <limits.h>
#include <string.h>

#include "../lib/util.h"
#include "config_fields.h"
#include "json.h"

/* Bumped when the layout changes incompatibly; a state file written by
 * another layout is refused rather than misread. */
#define STATE_FORMAT_VERSION 1

static void
state_freep (struct container_state **st)
{
  state_free (*st);
}
#define cleanup_state __attribute__ ((cleanup (state_freep)))

static void
json_freep (json_node **n)
{
  json_free (*n);
}
#define cleanup_json __attribute__ ((cleanup (json_freep)))

static void
put_string (struct json_writer *w, const char *key, const char *value)
{
  jw_key (w, key);
  jw_string (w, value);
}

static void
write_annotations (struct json_writer *w, const struct spec_kv *kv, size_t n)
{
  jw_object_begin (w);
  for (size_t i = 0; i < n; i++)
    {
      jw_key (w, kv[i].key);
      jw_string (w, kv[i].value);
    }
  jw_object_end (w);
}

static int
writer_result (struct json_writer *w, char **ret, struct moat_error **err)
{
  char *text = json_writer_finish (w);
  if (text == NULL)
    return moat_fail (err, 0, "encoding the state as JSON failed");
  *ret = text;
  return 0;
}

int
state_to_json (const struct container_state *st, char **ret,
               struct moat_error **err)
{
  struct json_writer *w = json_writer_new (false);

  jw_object_begin (w);
  jw_key (w, "version");
  jw_int (w, STATE_FORMAT_VERSION);
  put_string (w, "id", st->id);
  put_string (w, "bundle", st->bundle);
  put_string (w, "rootfs", st->rootfs);
  jw_key (w, "pid");
  jw_int (w, st->pid);
  jw_key (w, "pidStartTime");
  jw_uint (w, st->pid_starttime);
  put_string (w, "created", st->created);
  put_string (w, "cgroup", st->cgroup);
  put_string (w, "profile", st->profile);
  put_string (w, "netguard", st->netguard);
  jw_key (w, "usernsHostId");
  jw_uint (w, st->userns_host_id);
  jw_key (w, "started");
  jw_bool (w, st->started);
  jw_key (w, "tty");
  jw_bool (w, st->has_tty);
  if (st->landlock_exec)
    put_string (w, "landlockExec", st->landlock_exec);
  if (st->config_digest)
    put_string (w, "configDigest", st->config_digest);
  jw_key (w, "annotations");
  write_annotations (w, st->annotations, st->n_annotations);
  jw_object_end (w);
  return writer_result (w, ret, err);
}

static int
require_bool (const json_node *root, const char *key, bool *ret,
              struct moat_error **err)
{
  int r = require_member (root, "", key, err);
  return r < 0 ? r : get_bool (root, "", key, ret, err);
}

static int
parse_state (const json_node *root, struct container_state *st,
             struct moat_error **err)
{
  int64_t version = 0, pid = 0;
  uint64_t userns = 0;
  int r;

  if (!json_is_object (root))
    return moat_fail (err, 0, "expected a JSON object at the top level");
  if ((r = require_member (root, "", "version", err)) < 0
      || (r = get_i64 (root, "", "version", INT64_MIN, INT64_MAX, NULL,
                       &version, err))
             < 0)
    return r;
  if (version != STATE_FORMAT_VERSION)
    return moat_fail (err, 0,
                      "version: %lld is not %d (written by another "
                      "moat?)",
                      (long long)version, STATE_FORMAT_VERSION);
  if ((r = get_required_string (root, "", "id", &st->id, err)) < 0
      || (r = get_required_string (root, "", "bundle", &st->bundle, err)) < 0
      || (r = get_required_string (root, "", "rootfs", &st->rootfs, err)) < 0
      || (r = require_member (root, "", "pid", err)) < 0
      || (r = get_i64 (root, "", "pid", 0, INT_MAX, NULL, &pid, err)) < 0
      || (r = require_member (root, "", "pidStartTime", err)) < 0
      || (r = get_u64 (root, "", "pidStartTime", UINT64_MAX, NULL,
                       &st->pid_starttime, err))
             < 0
      || (r = get_required_string (root, "", "created", &st->created, err)) < 0
      || (r = get_string (root, "", "cgroup", &st->cgroup, err)) < 0
      || (r = get_string (root, "", "profile", &st->profile, err)) < 0
      || (r = get_string (root, "", "netguard", &st->netguard, err)) < 0
      || (r
          = get_u64 (root, "", "usernsHostId", UINT32_MAX, NULL, &userns, err))
             < 0
      || (r = require_bool (root, "started", &st->started, err)) < 0
      || (r = require_bool (root, "tty", &st->has_tty, err)) < 0
      || (r = get_string (root, "", "landlockExec", &st->landlock_exec, err))
             < 0
      || (r = get_string (root, "", "configDigest", &st->config_digest, err))
             < 0)
    return r;
  st->pid = (pid_t)pid;
  st->userns_host_id = (uint32_t)userns;
  return get_string_map (root, "", "annotations", &st->annotations,
                         &st->n_annotations, err);
}

int
state_from_json (const char *text, size_t len, struct container_state **ret,
                 struct moat_error **err)
{
  cleanup_json json_node *root = NULL;
  cleanup_state struct container_state *st = xcalloc (1, sizeof (*st));

  if (json_parse (text, len, JSON_MAX_SIZE, &root, err) < 0
      || parse_state (root, st, err) < 0)
    return moat_error_wrap (err, "state.json");
  *ret = steal_pointer (&st);
  return 0;
}

void
state_free (struct container_state *st)
{
  if (st == NULL)
    return;
  free (st->id);
  free (st->bundle);
  free (st->rootfs);
  free (st->created);
  free (st->cgroup);
  free (st->profile);
  free (st->netguard);
  free (st->landlock_exec);
  free (st->config_digest);
  spec_kv_free (st->annotations, st->n_annotations);
  free (st);
}

int
state_hook_json (const struct container_state *st, const char *status,
                 char **ret, struct moat_error **err)
{
  struct json_writer *w = json_writer_new (false);

  jw_object_begin (w);
  put_string (w, "ociVersion", "1.0.2");
  put_string (w, "id", st->id);
  put_string (w, "status", status);
  if (st->pid > 0 && strcmp (status, "stopped") != 0)
    {
      jw_key (w, "pid");
      jw_int (w, st->pid);
    }
  put_string (w, "bundle", st->bundle);
  if (st->n_annotations > 0)
    {
      jw_key (w, "annotations");
      write_annotations (w, st->annotations, st->n_annotations);
    }
  jw_object_end (w);
  return writer_result (w, ret, err);
}

/* The fields and their order are runc's, which engines and tools parse. */
int
state_oci_json (const struct container_state *st, const char *status,
                bool pretty, char **ret, struct moat_error **err)
{
  struct json_writer *w = json_writer_new (pretty);
  bool stopped = status != NULL && strcmp (status, "stopped") == 0;

  jw_object_begin (w);
  put_string (w, "ociVersion", "1.0.2");
  put_string (w, "id", st->id);
  jw_key (w, "pid");
  jw_int (w, stopped ? 0 : st->pid);
  put_string (w, "status", status);
  put_string (w, "bundle", st->bundle);
  put_string (w, "rootfs", st->rootfs);
  put_string (w, "created", st->created);
  put_string (w, "owner", st->owner ? st->owner : "");
  if (st->userns_host_id)
    {
      /* G12: the block of host ids the container's 0-65535 are. */
      cleanup_free char *map = xasprintf ("0 %u 65536", st->userns_host_id);
      put_string (w, "moatUserns", map);
    }
  jw_key (w, "annotations");
  write_annotations (w, st->annotations, st->n_annotations);
  jw_object_end (w);
  return writer_result (w, ret, err);
}
