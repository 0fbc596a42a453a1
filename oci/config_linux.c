/* config.json's "linux" object (config-linux.md): namespaces, id mappings,
 * devices, cgroup resources, sysctl, seccomp, masked and read-only paths,
 * time offsets. Also the update JSON, which is a linux.resources object. */
#include "spec.h"

#include <string.h>

#include "../lib/util.h"
#include "config_fields.h"
#include "json.h"

static int
parse_namespace (const json_node *n, const char *path, struct spec_linux *l,
                 struct moat_error **err)
{
  cleanup_free char *type = NULL;
  cleanup_free char *ns_path = NULL;
  int t, r;

  if ((r = get_required_string (n, path, "type", &type, err)) < 0
      || (r = get_string (n, path, "path", &ns_path, err)) < 0)
    return r;
  t = ns_type_from_name (type);
  if (t < 0)
    return field_fail (err, path, "type", "unknown namespace type \"%s\"",
                       type);
  if (l->ns[t].present)
    return field_fail (err, path, "type", "duplicate namespace type \"%s\"",
                       type);
  if (ns_path && ns_path[0] != '\0' && !is_absolute (ns_path))
    return field_fail (err, path, "path", "must be an absolute path");
  l->ns[t].present = true;
  if (ns_path && ns_path[0] != '\0')
    l->ns[t].path = steal_pointer (&ns_path);
  return 0;
}

static int
parse_namespaces (const json_node *lx, struct spec_linux *l,
                  struct moat_error **err)
{
  const json_node *arr = NULL;
  int r = get_array (lx, "linux", "namespaces", &arr, err);

  for (size_t i = 0; r == 0 && i < json_array_len (arr); i++)
    {
      const json_node *elem = json_array_get (arr, i);
      cleanup_free char *path = field_index_path ("linux.namespaces", i);
      if (!json_is_object (elem))
        return field_fail (err, path, NULL, "expected object");
      r = parse_namespace (elem, path, l, err);
    }
  return r;
}

static int
parse_idmap (const json_node *n, const char *path, void *slot,
             struct moat_error **err)
{
  struct spec_idmap *m = slot;
  static const char *const keys[] = { "containerID", "hostID", "size" };
  uint32_t *fields[] = { &m->container_id, &m->host_id, &m->size };

  for (size_t i = 0; i < 3; i++)
    {
      int r = require_member (n, path, keys[i], err);
      if (r == 0)
        r = get_u32 (n, path, keys[i], NULL, fields[i], err);
      if (r < 0)
        return r;
    }
  if (m->size == 0)
    return field_fail (err, path, "size", "must be greater than zero");
  return 0;
}

/* A single character from allowed, as "type" members are. */
static int
get_type_char (const json_node *n, const char *path, const char *allowed,
               char *ret, struct moat_error **err)
{
  cleanup_free char *type = NULL;
  int r = get_string (n, path, "type", &type, err);
  if (r < 0 || type == NULL)
    return r;
  if (strlen (type) != 1 || strchr (allowed, type[0]) == NULL)
    return field_fail (err, path, "type", "unknown device type \"%s\"", type);
  *ret = type[0];
  return 0;
}

static int
parse_device (const json_node *n, const char *path, void *slot,
              struct moat_error **err)
{
  struct spec_device *d = slot;
  int r;

  if ((r = get_required_string (n, path, "path", &d->path, err)) < 0
      || (r = require_member (n, path, "type", err)) < 0
      || (r = get_type_char (n, path, "cbup", &d->type, err)) < 0)
    return r;
  if (!is_absolute (d->path))
    return field_fail (err, path, "path", "must be an absolute path");
  if (d->type != 'p'
      && ((r = require_member (n, path, "major", err)) < 0
          || (r = require_member (n, path, "minor", err)) < 0))
    return r;
  if ((r = get_i64 (n, path, "major", 0, UINT32_MAX, NULL, &d->major, err)) < 0
      || (r = get_i64 (n, path, "minor", 0, UINT32_MAX, NULL, &d->minor, err))
             < 0
      || (r = get_u32 (n, path, "fileMode", &d->has_file_mode, &d->file_mode,
                       err))
             < 0
      || (r = get_u32 (n, path, "uid", &d->has_uid, &d->uid, err)) < 0
      || (r = get_u32 (n, path, "gid", &d->has_gid, &d->gid, err)) < 0)
    return r;
  /* Podman writes the file type bits too (020644): the runtime masks. */
  return 0;
}

static int
parse_device_rule (const json_node *n, const char *path, void *slot,
                   struct moat_error **err)
{
  struct spec_device_rule *d = slot;
  cleanup_free char *access = NULL;
  int r;

  d->type = 'a';
  d->major = d->minor = -1;
  if ((r = require_member (n, path, "allow", err)) < 0
      || (r = get_bool (n, path, "allow", &d->allow, err)) < 0
      || (r = get_type_char (n, path, "abc", &d->type, err)) < 0
      || (r = get_i64 (n, path, "major", -1, UINT32_MAX, NULL, &d->major, err))
             < 0
      || (r = get_i64 (n, path, "minor", -1, UINT32_MAX, NULL, &d->minor, err))
             < 0
      || (r = get_string (n, path, "access", &access, err)) < 0)
    return r;
  if (access == NULL)
    return 0;
  for (size_t i = 0; access[i]; i++)
    if (strchr ("rwm", access[i]) == NULL
        || strchr (access + i + 1, access[i]) != NULL)
      return field_fail (err, path, "access",
                         "\"%s\" is not a subset of \"rwm\"", access);
  /* Each of r, w, m at most once, so it fits. */
  strcpy (d->access, access);
  return 0;
}

static int
parse_memory (const json_node *res, const char *parent, struct spec_memory *m,
              struct moat_error **err)
{
  const json_node *n = NULL;
  cleanup_free char *path = field_path (parent, "memory");
  int r = get_object (res, parent, "memory", &n, err);

  if (r < 0 || n == NULL)
    return r;
  if ((r = get_i64 (n, path, "limit", -1, INT64_MAX, &m->has_limit, &m->limit,
                    err))
          < 0
      || (r = get_i64 (n, path, "reservation", -1, INT64_MAX,
                       &m->has_reservation, &m->reservation, err))
             < 0
      || (r = get_i64 (n, path, "swap", -1, INT64_MAX, &m->has_swap, &m->swap,
                       err))
             < 0
      || (r = get_u64 (n, path, "swappiness", UINT64_MAX, &m->has_swappiness,
                       &m->swappiness, err))
             < 0)
    return r;
  return get_bool (n, path, "disableOOMKiller", &m->disable_oom_killer, err);
}

static int
parse_cpu (const json_node *res, const char *parent, struct spec_cpu *c,
           struct moat_error **err)
{
  const json_node *n = NULL;
  cleanup_free char *path = field_path (parent, "cpu");
  int r = get_object (res, parent, "cpu", &n, err);

  if (r < 0 || n == NULL)
    return r;
  if ((r = get_u64 (n, path, "shares", UINT64_MAX, &c->has_shares, &c->shares,
                    err))
          < 0
      || (r = get_i64 (n, path, "quota", INT64_MIN, INT64_MAX, &c->has_quota,
                       &c->quota, err))
             < 0
      || (r = get_u64 (n, path, "period", UINT64_MAX, &c->has_period,
                       &c->period, err))
             < 0
      || (r = get_i64 (n, path, "realtimeRuntime", INT64_MIN, INT64_MAX,
                       &c->has_realtime_runtime, &c->realtime_runtime, err))
             < 0
      || (r = get_u64 (n, path, "realtimePeriod", UINT64_MAX,
                       &c->has_realtime_period, &c->realtime_period, err))
             < 0
      || (r = get_i64 (n, path, "idle", INT64_MIN, INT64_MAX, &c->has_idle,
                       &c->idle, err))
             < 0
      || (r = get_u64 (n, path, "burst", UINT64_MAX, &c->has_burst, &c->burst,
                       err))
             < 0
      || (r = get_string (n, path, "cpus", &c->cpus, err)) < 0)
    return r;
  return get_string (n, path, "mems", &c->mems, err);
}

/* The kernel's page size names: digits, then KB, MB or GB. */
static bool
page_size_name_ok (const char *s)
{
  size_t digits = strspn (s, "0123456789");
  return digits > 0 && digits <= 10 && s[0] != '0' && s[digits] != '\0'
         && strchr ("KMG", s[digits]) && strcmp (s + digits + 1, "B") == 0;
}

static int
parse_hugepage_limit (const json_node *n, const char *path, void *slot,
                      struct moat_error **err)
{
  struct spec_hugepage_limit *h = slot;
  int r;

  if ((r = get_required_string (n, path, "pageSize", &h->page_size, err)) < 0
      || (r = require_member (n, path, "limit", err)) < 0
      || (r = get_u64 (n, path, "limit", UINT64_MAX, NULL, &h->limit, err)) < 0)
    return r;
  if (!page_size_name_ok (h->page_size))
    return field_fail (err, path, "pageSize",
                       "\"%s\" is not a page size (\"2MB\", \"1GB\", "
                       "\"64KB\")",
                       h->page_size);
  return 0;
}

/* A resources object at path parent ("linux.resources" in config.json, ""
 * for update JSON). */
int
parse_resources (const json_node *res, const char *parent,
                 struct spec_resources *ret, struct moat_error **err)
{
  const json_node *pids = NULL, *blkio = NULL;
  cleanup_free char *pids_path = field_path (parent, "pids");
  cleanup_free char *blkio_path = field_path (parent, "blockIO");
  void *devices = NULL, *hugepages = NULL;
  uint64_t weight = 0;
  int r;

  r = get_object_array (res, parent, "devices", sizeof (*ret->devices),
                        &devices, &ret->n_devices, parse_device_rule, err);
  ret->devices = devices;
  if (r < 0 || (r = parse_memory (res, parent, &ret->memory, err)) < 0
      || (r = parse_cpu (res, parent, &ret->cpu, err)) < 0
      || (r = get_object (res, parent, "pids", &pids, err)) < 0
      || (r = get_i64 (pids, pids_path, "limit", INT64_MIN, INT64_MAX,
                       &ret->has_pids_limit, &ret->pids_limit, err))
             < 0
      || (r = get_object (res, parent, "blockIO", &blkio, err)) < 0
      || (r = get_u64 (blkio, blkio_path, "weight", UINT16_MAX,
                       &ret->has_blkio_weight, &weight, err))
             < 0)
    return r;
  ret->blkio_weight = (uint16_t)weight;
  r = get_object_array (res, parent, "hugepageLimits",
                        sizeof (*ret->hugepage_limits), &hugepages,
                        &ret->n_hugepage_limits, parse_hugepage_limit, err);
  ret->hugepage_limits = hugepages;
  if (r < 0)
    return r;
  return get_string_map (res, parent, "unified", &ret->unified, &ret->n_unified,
                         err);
}

static int
parse_seccomp_arg (const json_node *n, const char *path, void *slot,
                   struct moat_error **err)
{
  struct spec_seccomp_arg *a = slot;
  int r;

  if ((r = require_member (n, path, "index", err)) < 0
      || (r = get_u32 (n, path, "index", NULL, &a->index, err)) < 0
      || (r = require_member (n, path, "value", err)) < 0
      || (r = get_u64 (n, path, "value", UINT64_MAX, NULL, &a->value, err)) < 0
      || (r
          = get_u64 (n, path, "valueTwo", UINT64_MAX, NULL, &a->value_two, err))
             < 0)
    return r;
  return get_required_string (n, path, "op", &a->op, err);
}

static int
parse_seccomp_rule (const json_node *n, const char *path, void *slot,
                    struct moat_error **err)
{
  struct spec_seccomp_rule *rule = slot;
  void *args = NULL;
  int r;

  if ((r = require_member (n, path, "names", err)) < 0
      || (r = get_strv (n, path, "names", &rule->names, err)) < 0)
    return r;
  if (rule->names[0] == NULL)
    return field_fail (err, path, "names", "must not be empty");
  if ((r = get_required_string (n, path, "action", &rule->action, err)) < 0
      || (r = get_u32 (n, path, "errnoRet", &rule->has_errno_ret,
                       &rule->errno_ret, err))
             < 0)
    return r;
  r = get_object_array (n, path, "args", sizeof (*rule->args), &args,
                        &rule->n_args, parse_seccomp_arg, err);
  rule->args = args;
  return r;
}

static int
parse_seccomp (const json_node *lx, struct spec_seccomp *s,
               struct moat_error **err)
{
  static const char path[] = "linux.seccomp";
  const json_node *n = NULL;
  void *rules = NULL;
  int r = get_object (lx, "linux", "seccomp", &n, err);

  if (r < 0 || n == NULL)
    return r;
  s->present = true;
  if ((r = get_required_string (n, path, "defaultAction", &s->default_action,
                                err))
          < 0
      || (r = get_u32 (n, path, "defaultErrnoRet", &s->has_default_errno_ret,
                       &s->default_errno_ret, err))
             < 0
      || (r = get_strv (n, path, "architectures", &s->architectures, err)) < 0
      || (r = get_strv (n, path, "flags", &s->flags, err)) < 0
      || (r = get_string (n, path, "listenerPath", &s->listener_path, err)) < 0
      || (r = get_string (n, path, "listenerMetadata", &s->listener_metadata,
                          err))
             < 0)
    return r;
  r = get_object_array (n, path, "syscalls", sizeof (*s->syscalls), &rules,
                        &s->n_syscalls, parse_seccomp_rule, err);
  s->syscalls = rules;
  return r;
}

static int
parse_time_offset (const json_node *offsets, const char *key, int64_t *secs,
                   int64_t *nanosecs, struct moat_error **err)
{
  const json_node *n = NULL;
  cleanup_free char *path = field_path ("linux.timeOffsets", key);
  int r = get_object (offsets, "linux.timeOffsets", key, &n, err);

  if (r < 0 || n == NULL)
    return r;
  if ((r = get_i64 (n, path, "secs", INT64_MIN, INT64_MAX, NULL, secs, err))
      < 0)
    return r;
  return get_i64 (n, path, "nanosecs", 0, 999999999, NULL, nanosecs, err);
}

static int
parse_time_offsets (const json_node *lx, struct spec_linux *l,
                    struct moat_error **err)
{
  const json_node *n = NULL;
  int r = get_object (lx, "linux", "timeOffsets", &n, err);

  if (r < 0 || n == NULL)
    return r;
  l->has_time_offsets = true;
  if ((r = parse_time_offset (n, "monotonic", &l->monotonic_secs,
                              &l->monotonic_nanosecs, err))
      < 0)
    return r;
  return parse_time_offset (n, "boottime", &l->boottime_secs,
                            &l->boottime_nanosecs, err);
}

static int
parse_linux_lists (const json_node *lx, struct spec_linux *l,
                   struct moat_error **err)
{
  void *uids = NULL, *gids = NULL, *devices = NULL;
  int r;

  r = get_object_array (lx, "linux", "uidMappings", sizeof (struct spec_idmap),
                        &uids, &l->n_uid_mappings, parse_idmap, err);
  l->uid_mappings = uids;
  if (r < 0)
    return r;
  r = get_object_array (lx, "linux", "gidMappings", sizeof (struct spec_idmap),
                        &gids, &l->n_gid_mappings, parse_idmap, err);
  l->gid_mappings = gids;
  if (r < 0)
    return r;
  r = get_object_array (lx, "linux", "devices", sizeof (struct spec_device),
                        &devices, &l->n_devices, parse_device, err);
  l->devices = devices;
  return r;
}

int
parse_linux (const json_node *lx, struct spec_linux *l, struct moat_error **err)
{
  const json_node *res = NULL;
  int r;

  if ((r = parse_namespaces (lx, l, err)) < 0
      || (r = parse_linux_lists (lx, l, err)) < 0
      || (r = get_string (lx, "linux", "cgroupsPath", &l->cgroups_path, err))
             < 0
      || (r = get_object (lx, "linux", "resources", &res, err)) < 0)
    return r;
  if (res)
    {
      l->has_resources = true;
      if ((r = parse_resources (res, "linux.resources", &l->resources, err))
          < 0)
        return r;
    }
  if ((r
       = get_string_map (lx, "linux", "sysctl", &l->sysctl, &l->n_sysctl, err))
          < 0
      || (r = parse_seccomp (lx, &l->seccomp, err)) < 0
      || (r = get_string (lx, "linux", "rootfsPropagation",
                          &l->rootfs_propagation, err))
             < 0
      || (r = get_strv (lx, "linux", "maskedPaths", &l->masked_paths, err)) < 0
      || (r = get_strv (lx, "linux", "readonlyPaths", &l->readonly_paths, err))
             < 0
      || (r = get_string (lx, "linux", "mountLabel", &l->mount_label, err)) < 0)
    return r;
  return parse_time_offsets (lx, l, err);
}

void
spec_resources_clear (struct spec_resources *r)
{
  if (r == NULL)
    return;
  free (r->devices);
  free (r->cpu.cpus);
  free (r->cpu.mems);
  spec_kv_free (r->unified, r->n_unified);
  for (size_t i = 0; i < r->n_hugepage_limits; i++)
    free (r->hugepage_limits[i].page_size);
  free (r->hugepage_limits);
  memset (r, 0, sizeof (*r));
}

static void
spec_seccomp_clear (struct spec_seccomp *s)
{
  free (s->default_action);
  strv_free (s->architectures);
  strv_free (s->flags);
  free (s->listener_path);
  free (s->listener_metadata);
  for (size_t i = 0; s->syscalls && i < s->n_syscalls; i++)
    {
      struct spec_seccomp_rule *rule = &s->syscalls[i];
      strv_free (rule->names);
      free (rule->action);
      for (size_t j = 0; rule->args && j < rule->n_args; j++)
        free (rule->args[j].op);
      free (rule->args);
    }
  free (s->syscalls);
  memset (s, 0, sizeof (*s));
}

void
spec_linux_clear (struct spec_linux *l)
{
  for (int t = 0; t < NS__MAX; t++)
    free (l->ns[t].path);
  free (l->uid_mappings);
  free (l->gid_mappings);
  for (size_t i = 0; l->devices && i < l->n_devices; i++)
    free (l->devices[i].path);
  free (l->devices);
  free (l->cgroups_path);
  spec_resources_clear (&l->resources);
  spec_kv_free (l->sysctl, l->n_sysctl);
  spec_seccomp_clear (&l->seccomp);
  free (l->rootfs_propagation);
  strv_free (l->masked_paths);
  strv_free (l->readonly_paths);
  free (l->mount_label);
  memset (l, 0, sizeof (*l));
}
