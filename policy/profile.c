/* The policy: from a parsed spec and a profile to the hardened spec, and the
 * list of everything that changed. Pure: no I/O, no syscalls. The mount
 * rules (G5/G6) are in profile_mounts.c, the limits (G7) and annotations in
 * profile_resources.c, the operator config in profile_config.c. */
#include "profile.h"
#include "profile_internal.h"
#include "../lib/util.h"
#include "../oci/json.h"
#include "../oci/process_bounds.h"
#include "../oci/resource_bounds.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <string.h>
#include <sys/resource.h>

/* Docker's list, then what helps a kernel exploit more than it helps a
 * program (G9): the slab allocator's caches and the kernel's vmalloc
 * areas (heap grooming, KASLR), physical page flags, counts and zones
 * (Rowhammer, page-level grooming), physical and I/O address maps, every
 * user's key quotas, the kernel's build id, crash layout and type info
 * (vmcoreinfo, notes, btf: offsets without /proc/kallsyms), debugfs and
 * tracefs, and module parameters (/sys/module: which modules are loaded
 * and how, the attack surface). Nothing ps, top, free, os.cpu_count () or
 * a JVM reads: /proc/meminfo, /proc/stat, /proc/cpuinfo, /proc/PID,
 * /sys/devices/system/cpu and /sys/fs/cgroup stay. */
const char *const profile_masked_paths[] = {
  "/proc/acpi",
  "/proc/asound",
  "/proc/interrupts",
  "/proc/kallsyms",
  "/proc/kcore",
  "/proc/keys",
  "/proc/latency_stats",
  "/proc/sched_debug",
  "/proc/scsi",
  "/proc/timer_list",
  "/proc/timer_stats",
  "/sys/devices/virtual/powercap",
  "/sys/firmware",
  "/proc/slabinfo",
  "/proc/vmallocinfo",
  "/proc/kpageflags",
  "/proc/kpagecount",
  "/proc/kpagecgroup",
  "/proc/pagetypeinfo",
  "/proc/zoneinfo",
  "/proc/buddyinfo",
  "/proc/iomem",
  "/proc/ioports",
  "/proc/key-users",
  "/proc/config.gz",
  "/sys/kernel/vmcoreinfo",
  "/sys/kernel/notes",
  "/sys/kernel/btf",
  "/sys/kernel/debug",
  "/sys/kernel/tracing",
  "/sys/kernel/slab",
  "/sys/module",
  NULL,
};

const char *const profile_readonly_paths[] = {
  "/proc/bus",           "/proc/fs", "/proc/irq", "/proc/sys",
  "/proc/sysrq-trigger", NULL,
};

/* Only sysctls the kernel keeps per namespace: IPC and mqueue (the
 * container always has its own IPC namespace) and net (its own or its pod's
 * network namespace, never the host's). */
const char *const profile_allowed_sysctls[] = {
  "kernel.shm*", "kernel.msg*", "kernel.sem", "fs.mqueue.*", "net.*", NULL,
};

/* ---- small helpers ---- */

char *
profile_path_normalize (const char *path)
{
  size_t len = strlen (path);
  char *out = xmalloc (len + 2);
  size_t o = 0;
  const char *s = path;

  out[o++] = '/';
  while (*s)
    {
      const char *end;
      size_t n;

      while (*s == '/')
        s++;
      if (*s == '\0')
        break;
      end = strchrnul (s, '/');
      n = end - s;
      if (n == 1 && s[0] == '.')
        ;
      else if (n == 2 && s[0] == '.' && s[1] == '.')
        {
          while (o > 1 && out[o - 1] != '/')
            o--;
          if (o > 1)
            o--; /* the '/' before the dropped component */
        }
      else
        {
          if (o > 1)
            out[o++] = '/';
          memcpy (out + o, s, n);
          o += n;
        }
      s = end;
    }
  out[o] = '\0';
  return out;
}

/* ---- G1: namespaces ---- */

static const enum ns_type isolating_namespaces[] = {
  NS_MOUNT, NS_NET, NS_PID, NS_IPC, NS_UTS, NS_CGROUP,
};

static bool
is_host_ns_path (const char *path, const char *proc_name)
{
  static const char *const owners[] = { "1", "self", "thread-self" };
  cleanup_free char *norm = profile_path_normalize (path);

  for (size_t i = 0; i < sizeof (owners) / sizeof (owners[0]); i++)
    {
      cleanup_free char *host
          = xasprintf ("/proc/%s/ns/%s", owners[i], proc_name);
      if (strcmp (norm, host) == 0)
        return true;
    }
  return false;
}

/* The host's namespaces (absent from config.json, or named by a /proc path
 * of the host) are replaced by fresh ones; joining another namespace (a
 * Kubernetes pod's) is allowed: the BPF guard still applies there. The user
 * namespace is G12's (profile_userns.c). */
static void
harden_namespaces (struct spec_linux *linux_, struct override_list *ov)
{
  size_t n = sizeof (isolating_namespaces) / sizeof (isolating_namespaces[0]);

  for (size_t i = 0; i < n; i++)
    {
      enum ns_type t = isolating_namespaces[i];
      struct spec_namespace *ns = &linux_->ns[t];
      cleanup_free char *path
          = xasprintf ("linux.namespaces.%s", ns_type_name (t));

      if (!ns->present)
        {
          ns->present = true;
          override_list_add (ov, OVERRIDE_ADDED, path, "host", "new");
        }
      else if (ns->path && is_host_ns_path (ns->path, ns_table[t].proc_name))
        {
          override_list_add (ov, OVERRIDE_CHANGED, path, ns->path, "new");
          free (ns->path);
          ns->path = NULL;
        }
    }
}

int
profile_check_ns_join (enum ns_type type, dev_t dev, ino_t ino, dev_t host_dev,
                       ino_t host_ino, const struct profile *p,
                       struct moat_error **err)
{
  size_t n = sizeof (isolating_namespaces) / sizeof (isolating_namespaces[0]);

  if (dev != host_dev || ino != host_ino)
    return 0;
  if (type == NS_USER && p->userns)
    return moat_fail (err, 0,
                      "refusing to join the host's user namespace: container "
                      "root would be host root (G12, profile %s)",
                      p->name);
  for (size_t i = 0; i < n; i++)
    if (isolating_namespaces[i] == type)
      return moat_fail (err, 0,
                        "refusing to join the host's %s namespace (profile %s)",
                        ns_type_name (type), p->name);
  return 0;
}

/* ---- devices, sysctl, seccomp, masked paths ---- */

static const struct safe_device *
find_safe_device (char type, int64_t major, int64_t minor)
{
  if (type == 'u')
    type = 'c';
  for (size_t i = 0; i < n_safe_devices; i++)
    {
      const struct safe_device *d = &safe_devices[i];
      if (d->type == type && d->major == major
          && (d->minor == minor || d->minor == -1))
        return d;
    }
  return NULL;
}

/* Privileged configs list every host device: dropping them (one override
 * naming them all) lets such a container run, confined. */
static void
harden_devices (struct spec_linux *linux_, struct override_list *ov)
{
  cleanup_strv char **dropped = NULL;
  size_t kept = 0;

  for (size_t i = 0; i < linux_->n_devices; i++)
    {
      struct spec_device *d = &linux_->devices[i];
      const struct safe_device *safe
          = find_safe_device (d->type, d->major, d->minor);
      if (safe && safe->node && safe->minor != -1)
        {
          linux_->devices[kept++] = *d;
          continue;
        }
      cleanup_free char *text
          = xasprintf ("%s (%c %" PRId64 ":%" PRId64 ")", d->path, d->type,
                       d->major, d->minor);
      strv_append (&dropped, text);
      free (d->path);
    }
  linux_->n_devices = kept;
  if (dropped)
    {
      cleanup_free char *asked = strv_join (dropped, ", ");
      override_list_add (ov, OVERRIDE_REMOVED, "linux.devices", asked,
                         "default devices only");
    }
}

/* Names are written under /proc/sys by the runtime: no empty, "." or ".."
 * component may turn "net.*" into a path elsewhere. */
static bool
sysctl_name_allowed (const char *name)
{
  const char *s = name;

  if (*name == '\0')
    return false;
  for (;;)
    {
      size_t n = strcspn (s, "./");
      if (n == 0)
        return false;
      s += n;
      if (*s == '\0')
        break;
      s++;
    }
  for (size_t i = 0; profile_allowed_sysctls[i]; i++)
    {
      cleanup_free char *dotted = xstrdup (name);
      for (char *c = dotted; *c; c++)
        if (*c == '/')
          *c = '.';
      if (fnmatch (profile_allowed_sysctls[i], dotted, 0) == 0)
        return true;
    }
  return false;
}

/* The builtin filter is loaded by the runtime whatever happens; the
 * config's own filter stays and stacks. Only its SPEC_ALLOW flag goes: it
 * would turn off the speculative store bypass mitigation for hostile code. */
static void
harden_seccomp (struct spec_seccomp *s, struct override_list *ov)
{
  size_t kept = 0;

  if (!s->present)
    {
      override_list_add (ov, OVERRIDE_ADDED, "linux.seccomp", "none",
                         "builtin filter only");
      return;
    }
  for (size_t i = 0; s->flags && s->flags[i]; i++)
    {
      if (strcmp (s->flags[i], "SECCOMP_FILTER_FLAG_SPEC_ALLOW") == 0)
        {
          override_list_add (ov, OVERRIDE_REMOVED, "linux.seccomp.flags",
                             s->flags[i], NULL);
          free (s->flags[i]);
          continue;
        }
      s->flags[kept++] = s->flags[i];
    }
  if (s->flags)
    s->flags[kept] = NULL;
}

static bool
strv_contains_path (char *const *v, const char *path)
{
  for (size_t i = 0; v && v[i]; i++)
    {
      cleanup_free char *norm = profile_path_normalize (v[i]);
      if (strcmp (norm, path) == 0)
        return true;
    }
  return false;
}

static void
union_paths (char ***v, const char *const *required, const char *json_path,
             struct override_list *ov)
{
  for (size_t i = 0; required[i]; i++)
    {
      if (strv_contains_path (*v, required[i]))
        continue;
      strv_append (v, required[i]);
      override_list_add (ov, OVERRIDE_ADDED, json_path, NULL, required[i]);
    }
}

/* G3, G4, G7 (rlimits), G10 (env): the bounds every process of the
 * container gets, applied to this one. */
static void
harden_process (struct spec_process *proc, const struct profile *p,
                struct override_list *ov)
{
  struct process_bounds b = profile_process_bounds (p);
  process_bounds_apply (proc, &b, ov);
}

/* ---- entry points ---- */

int
profile_apply (struct spec *spec, const struct profile *base,
               const struct operator_config *cfg, struct override_list *ov,
               struct moat_error **err)
{
  return profile_apply_effective (spec, base, cfg, NULL, ov, err);
}

int
profile_apply_effective (struct spec *spec, const struct profile *base,
                         const struct operator_config *cfg,
                         struct profile **ret_effective,
                         struct override_list *ov, struct moat_error **err)
{
  cleanup_profile struct profile *p = NULL;
  struct spec_linux *linux_ = &spec->linux_;
  int r;

  if (profile_effective (base, spec->annotations, spec->n_annotations, &p, ov,
                         err)
      < 0)
    return -1;
  cfg = operator_config_or_builtin (cfg);

  harden_namespaces (linux_, ov);
  if (profile_harden_userns (linux_, p, cfg, ov, err) < 0)
    return -1;
  if (spec->process)
    harden_process (spec->process, p, ov);
  if (!spec->root_readonly)
    {
      override_list_add (ov, OVERRIDE_CHANGED, "root.readonly", "false",
                         "true");
      spec->root_readonly = true;
    }
  r = profile_harden_mounts (spec, p, cfg, ov, err);
  linux_->has_resources = true;
  profile_harden_resources (&linux_->resources, p, true, ov);
  harden_devices (linux_, ov);
  spec_filter_kv (linux_->sysctl, &linux_->n_sysctl, sysctl_name_allowed,
                  "linux.sysctl", ov);
  harden_seccomp (&linux_->seccomp, ov);
  union_paths (&linux_->masked_paths, profile_masked_paths, "linux.maskedPaths",
               ov);
  union_paths (&linux_->readonly_paths, profile_readonly_paths,
               "linux.readonlyPaths", ov);
  if (r == 0)
    r = profile_check_seccomp_agent (&linux_->seccomp, cfg, err);
  if (ret_effective)
    {
      /* Final: the audit line and policy.json digest its lists once. */
      profile_network_take_digests (p);
      *ret_effective = steal_pointer (&p);
    }
  return r;
}

struct process_bounds
profile_process_bounds (const struct profile *p)
{
  return (struct process_bounds){ .nofile = p->nofile,
                                  .credential_env = p->credential_env };
}

int
profile_apply_process (struct spec_process *proc, const struct profile *p,
                       struct override_list *ov, struct moat_error **err)
{
  if (proc == NULL)
    return moat_fail (err, EINVAL, "applying profile %s: no process", p->name);
  harden_process (proc, p, ov);
  return 0;
}
