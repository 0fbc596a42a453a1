/* struct spec back to config.json: what create saves as the container's
 * final spec (every mount, flag, namespace and label as applied), which
 * later verbs parse with spec_parse and obey as it is. Written so that
 * spec_parse reads back the same struct: every field spec_parse knows,
 * optional ones only when present. */
#include "spec.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>

#include "json.h"
#include "../lib/util.h"

static void
key_str (struct json_writer *w, const char *key, const char *v)
{
  if (v == NULL)
    return;
  jw_key (w, key);
  jw_string (w, v);
}

static void
key_int (struct json_writer *w, const char *key, bool has, int64_t v)
{
  if (!has)
    return;
  jw_key (w, key);
  jw_int (w, v);
}

static void
key_uint (struct json_writer *w, const char *key, bool has, uint64_t v)
{
  if (!has)
    return;
  jw_key (w, key);
  jw_uint (w, v);
}

static void
key_map (struct json_writer *w, const char *key, const struct spec_kv *kv,
         size_t n)
{
  if (kv == NULL)
    return;
  jw_key (w, key);
  jw_object_begin (w);
  for (size_t i = 0; i < n; i++)
    key_str (w, kv[i].key, kv[i].value);
  jw_object_end (w);
}

char *
spec_cap_name (int cap)
{
  char *name = cap_to_name (cap);
  char *up;

  if (name == NULL)
    return xasprintf ("CAP_%d", cap);
  up = xasprintf ("%s%s", strncmp (name, "cap_", 4) ? "CAP_" : "", name);
  cap_free (name);
  for (char *c = up; *c; c++)
    *c = (char)toupper ((unsigned char)*c);
  return up;
}

static void
key_caps (struct json_writer *w, const char *key, uint64_t set)
{
  jw_key (w, key);
  jw_array_begin (w);
  for (int i = 0; i < 64; i++)
    if (set & (UINT64_C (1) << i))
      {
        cleanup_free char *name = spec_cap_name (i);
        jw_string (w, name);
      }
  jw_array_end (w);
}

static void
write_process (struct json_writer *w, const struct spec_process *p)
{
  const struct spec_user *u = &p->user;

  jw_object_begin (w);
  jw_key (w, "terminal");
  jw_bool (w, p->terminal);
  if (p->has_console_size)
    {
      jw_key (w, "consoleSize");
      jw_object_begin (w);
      key_uint (w, "height", true, p->console_height);
      key_uint (w, "width", true, p->console_width);
      jw_object_end (w);
    }
  jw_key (w, "user");
  jw_object_begin (w);
  key_uint (w, "uid", true, u->uid);
  key_uint (w, "gid", true, u->gid);
  key_uint (w, "umask", u->has_umask, u->umask);
  jw_key (w, "additionalGids");
  jw_array_begin (w);
  for (size_t i = 0; i < u->n_additional_gids; i++)
    jw_uint (w, u->additional_gids[i]);
  jw_array_end (w);
  jw_object_end (w);
  jw_strv_member (w, "args", p->args);
  jw_strv_member (w, "env", p->env);
  key_str (w, "cwd", p->cwd);
  if (p->caps.present)
    {
      jw_key (w, "capabilities");
      jw_object_begin (w);
      key_caps (w, "bounding", p->caps.bounding);
      key_caps (w, "effective", p->caps.effective);
      key_caps (w, "inheritable", p->caps.inheritable);
      key_caps (w, "permitted", p->caps.permitted);
      key_caps (w, "ambient", p->caps.ambient);
      jw_object_end (w);
    }
  jw_key (w, "rlimits");
  jw_array_begin (w);
  for (size_t i = 0; i < p->n_rlimits; i++)
    {
      jw_object_begin (w);
      key_str (w, "type", p->rlimits[i].type);
      key_uint (w, "soft", true, p->rlimits[i].soft);
      key_uint (w, "hard", true, p->rlimits[i].hard);
      jw_object_end (w);
    }
  jw_array_end (w);
  jw_key (w, "noNewPrivileges");
  jw_bool (w, p->no_new_privileges);
  key_int (w, "oomScoreAdj", p->has_oom_score_adj, p->oom_score_adj);
  key_str (w, "apparmorProfile", p->apparmor_profile);
  key_str (w, "selinuxLabel", p->selinux_label);
  jw_object_end (w);
}

static void
write_mounts (struct json_writer *w, const struct spec *s)
{
  jw_key (w, "mounts");
  jw_array_begin (w);
  for (size_t i = 0; i < s->n_mounts; i++)
    {
      const struct spec_mount *m = &s->mounts[i];
      jw_object_begin (w);
      key_str (w, "destination", m->destination);
      key_str (w, "type", m->type);
      key_str (w, "source", m->source);
      if (m->options)
        jw_strv_member (w, "options", m->options);
      jw_object_end (w);
    }
  jw_array_end (w);
}

static void
write_hooks (struct json_writer *w, const struct spec *s)
{
  jw_key (w, "hooks");
  jw_object_begin (w);
  for (int k = 0; k < HOOK__MAX; k++)
    {
      if (s->hooks[k].n == 0)
        continue;
      jw_key (w, hook_kind_name (k));
      jw_array_begin (w);
      for (size_t i = 0; i < s->hooks[k].n; i++)
        {
          const struct spec_hook *h = &s->hooks[k].v[i];
          jw_object_begin (w);
          key_str (w, "path", h->path);
          if (h->args)
            jw_strv_member (w, "args", h->args);
          if (h->env)
            jw_strv_member (w, "env", h->env);
          key_int (w, "timeout", h->timeout != 0, h->timeout);
          jw_object_end (w);
        }
      jw_array_end (w);
    }
  jw_object_end (w);
}

static void
write_idmaps (struct json_writer *w, const char *key,
              const struct spec_idmap *m, size_t n)
{
  jw_key (w, key);
  jw_array_begin (w);
  for (size_t i = 0; i < n; i++)
    {
      jw_object_begin (w);
      key_uint (w, "containerID", true, m[i].container_id);
      key_uint (w, "hostID", true, m[i].host_id);
      key_uint (w, "size", true, m[i].size);
      jw_object_end (w);
    }
  jw_array_end (w);
}

static void
key_type_char (struct json_writer *w, char type)
{
  char t[2] = { type, '\0' };
  key_str (w, "type", t);
}

static void
write_devices (struct json_writer *w, const struct spec_linux *l)
{
  jw_key (w, "devices");
  jw_array_begin (w);
  for (size_t i = 0; i < l->n_devices; i++)
    {
      const struct spec_device *d = &l->devices[i];
      jw_object_begin (w);
      key_str (w, "path", d->path);
      key_type_char (w, d->type);
      key_int (w, "major", true, d->major);
      key_int (w, "minor", true, d->minor);
      key_uint (w, "fileMode", d->has_file_mode, d->file_mode);
      key_uint (w, "uid", d->has_uid, d->uid);
      key_uint (w, "gid", d->has_gid, d->gid);
      jw_object_end (w);
    }
  jw_array_end (w);
}

static void
write_memory_cpu (struct json_writer *w, const struct spec_resources *r)
{
  const struct spec_memory *m = &r->memory;
  const struct spec_cpu *c = &r->cpu;

  jw_key (w, "memory");
  jw_object_begin (w);
  key_int (w, "limit", m->has_limit, m->limit);
  key_int (w, "reservation", m->has_reservation, m->reservation);
  key_int (w, "swap", m->has_swap, m->swap);
  key_uint (w, "swappiness", m->has_swappiness, m->swappiness);
  jw_key (w, "disableOOMKiller");
  jw_bool (w, m->disable_oom_killer);
  jw_object_end (w);
  jw_key (w, "cpu");
  jw_object_begin (w);
  key_uint (w, "shares", c->has_shares, c->shares);
  key_int (w, "quota", c->has_quota, c->quota);
  key_uint (w, "period", c->has_period, c->period);
  key_int (w, "realtimeRuntime", c->has_realtime_runtime, c->realtime_runtime);
  key_uint (w, "realtimePeriod", c->has_realtime_period, c->realtime_period);
  key_int (w, "idle", c->has_idle, c->idle);
  key_uint (w, "burst", c->has_burst, c->burst);
  key_str (w, "cpus", c->cpus);
  key_str (w, "mems", c->mems);
  jw_object_end (w);
}

static void
write_resources (struct json_writer *w, const struct spec_resources *r)
{
  jw_key (w, "resources");
  jw_object_begin (w);
  jw_key (w, "devices");
  jw_array_begin (w);
  for (size_t i = 0; i < r->n_devices; i++)
    {
      const struct spec_device_rule *d = &r->devices[i];
      jw_object_begin (w);
      jw_key (w, "allow");
      jw_bool (w, d->allow);
      key_type_char (w, d->type);
      key_int (w, "major", true, d->major);
      key_int (w, "minor", true, d->minor);
      key_str (w, "access", d->access[0] ? d->access : NULL);
      jw_object_end (w);
    }
  jw_array_end (w);
  write_memory_cpu (w, r);
  if (r->has_pids_limit)
    {
      jw_key (w, "pids");
      jw_object_begin (w);
      key_int (w, "limit", true, r->pids_limit);
      jw_object_end (w);
    }
  if (r->has_blkio_weight)
    {
      jw_key (w, "blockIO");
      jw_object_begin (w);
      key_uint (w, "weight", true, r->blkio_weight);
      jw_object_end (w);
    }
  jw_key (w, "hugepageLimits");
  jw_array_begin (w);
  for (size_t i = 0; i < r->n_hugepage_limits; i++)
    {
      jw_object_begin (w);
      key_str (w, "pageSize", r->hugepage_limits[i].page_size);
      key_uint (w, "limit", true, r->hugepage_limits[i].limit);
      jw_object_end (w);
    }
  jw_array_end (w);
  key_map (w, "unified", r->unified, r->n_unified);
  jw_object_end (w);
}

static void
write_seccomp_rule (struct json_writer *w, const struct spec_seccomp_rule *rule)
{
  jw_object_begin (w);
  jw_strv_member (w, "names", rule->names);
  key_str (w, "action", rule->action);
  key_uint (w, "errnoRet", rule->has_errno_ret, rule->errno_ret);
  jw_key (w, "args");
  jw_array_begin (w);
  for (size_t j = 0; j < rule->n_args; j++)
    {
      const struct spec_seccomp_arg *a = &rule->args[j];
      jw_object_begin (w);
      key_uint (w, "index", true, a->index);
      key_uint (w, "value", true, a->value);
      key_uint (w, "valueTwo", true, a->value_two);
      key_str (w, "op", a->op);
      jw_object_end (w);
    }
  jw_array_end (w);
  jw_object_end (w);
}

static void
write_seccomp (struct json_writer *w, const struct spec_seccomp *s)
{
  if (!s->present)
    return;
  jw_key (w, "seccomp");
  jw_object_begin (w);
  key_str (w, "defaultAction", s->default_action);
  key_uint (w, "defaultErrnoRet", s->has_default_errno_ret,
            s->default_errno_ret);
  if (s->architectures)
    jw_strv_member (w, "architectures", s->architectures);
  if (s->flags)
    jw_strv_member (w, "flags", s->flags);
  key_str (w, "listenerPath", s->listener_path);
  key_str (w, "listenerMetadata", s->listener_metadata);
  jw_key (w, "syscalls");
  jw_array_begin (w);
  for (size_t i = 0; i < s->n_syscalls; i++)
    write_seccomp_rule (w, &s->syscalls[i]);
  jw_array_end (w);
  jw_object_end (w);
}

static void
write_time_offset (struct json_writer *w, const char *key, int64_t secs,
                   int64_t nanosecs)
{
  jw_key (w, key);
  jw_object_begin (w);
  key_int (w, "secs", true, secs);
  key_int (w, "nanosecs", true, nanosecs);
  jw_object_end (w);
}

static void
write_linux (struct json_writer *w, const struct spec_linux *l)
{
  jw_key (w, "linux");
  jw_object_begin (w);
  jw_key (w, "namespaces");
  jw_array_begin (w);
  for (int t = 0; t < NS__MAX; t++)
    if (l->ns[t].present)
      {
        jw_object_begin (w);
        key_str (w, "type", ns_type_name (t));
        key_str (w, "path", l->ns[t].path);
        jw_object_end (w);
      }
  jw_array_end (w);
  write_idmaps (w, "uidMappings", l->uid_mappings, l->n_uid_mappings);
  write_idmaps (w, "gidMappings", l->gid_mappings, l->n_gid_mappings);
  write_devices (w, l);
  key_str (w, "cgroupsPath", l->cgroups_path);
  if (l->has_resources)
    write_resources (w, &l->resources);
  key_map (w, "sysctl", l->sysctl, l->n_sysctl);
  write_seccomp (w, &l->seccomp);
  key_str (w, "rootfsPropagation", l->rootfs_propagation);
  jw_strv_member (w, "maskedPaths", l->masked_paths);
  jw_strv_member (w, "readonlyPaths", l->readonly_paths);
  key_str (w, "mountLabel", l->mount_label);
  if (l->has_time_offsets)
    {
      jw_key (w, "timeOffsets");
      jw_object_begin (w);
      write_time_offset (w, "monotonic", l->monotonic_secs,
                         l->monotonic_nanosecs);
      write_time_offset (w, "boottime", l->boottime_secs, l->boottime_nanosecs);
      jw_object_end (w);
    }
  jw_object_end (w);
}

void
spec_write (struct json_writer *w, const struct spec *s)
{
  jw_object_begin (w);
  key_str (w, "ociVersion", s->oci_version);
  jw_key (w, "root");
  jw_object_begin (w);
  key_str (w, "path", s->root_path);
  jw_key (w, "readonly");
  jw_bool (w, s->root_readonly);
  jw_object_end (w);
  if (s->process)
    {
      jw_key (w, "process");
      write_process (w, s->process);
    }
  key_str (w, "hostname", s->hostname);
  key_str (w, "domainname", s->domainname);
  write_mounts (w, s);
  write_hooks (w, s);
  key_map (w, "annotations", s->annotations, s->n_annotations);
  write_linux (w, &s->linux_);
  jw_object_end (w);
}

char *
spec_to_json (const struct spec *s)
{
  struct json_writer *w = json_writer_new (false);
  spec_write (w, s);
  return json_writer_finish (w);
}
