/* G3, G4, G7 (rlimits), G10 (env) on one process: the bounds every
 * process of a container gets, the init's at create and each `moat exec`'s
 * later. The policy sets the bounds (its decision, saved with the
 * container); this applies them, so that exec obeys the saved decision
 * without judging again. */
#include "process_bounds.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../lib/util.h"

static const char *const cap_names[] = {
  "CAP_CHOWN",
  "CAP_DAC_OVERRIDE",
  "CAP_DAC_READ_SEARCH",
  "CAP_FOWNER",
  "CAP_FSETID",
  "CAP_KILL",
  "CAP_SETGID",
  "CAP_SETUID",
  "CAP_SETPCAP",
  "CAP_LINUX_IMMUTABLE",
  "CAP_NET_BIND_SERVICE",
  "CAP_NET_BROADCAST",
  "CAP_NET_ADMIN",
  "CAP_NET_RAW",
  "CAP_IPC_LOCK",
  "CAP_IPC_OWNER",
  "CAP_SYS_MODULE",
  "CAP_SYS_RAWIO",
  "CAP_SYS_CHROOT",
  "CAP_SYS_PTRACE",
  "CAP_SYS_PACCT",
  "CAP_SYS_ADMIN",
  "CAP_SYS_BOOT",
  "CAP_SYS_NICE",
  "CAP_SYS_RESOURCE",
  "CAP_SYS_TIME",
  "CAP_SYS_TTY_CONFIG",
  "CAP_MKNOD",
  "CAP_LEASE",
  "CAP_AUDIT_WRITE",
  "CAP_AUDIT_CONTROL",
  "CAP_SETFCAP",
  "CAP_MAC_OVERRIDE",
  "CAP_MAC_ADMIN",
  "CAP_SYSLOG",
  "CAP_WAKE_ALARM",
  "CAP_BLOCK_SUSPEND",
  "CAP_AUDIT_READ",
  "CAP_PERFMON",
  "CAP_BPF",
  "CAP_CHECKPOINT_RESTORE",
};

static char *
caps_text (uint64_t set)
{
  cleanup_strv char **names = NULL;
  size_t n_known = sizeof (cap_names) / sizeof (cap_names[0]);

  for (size_t i = 0; i < 64; i++)
    {
      cleanup_free char *unknown = NULL;
      if (!(set & (UINT64_C (1) << i)))
        continue;
      if (i >= n_known)
        unknown = xasprintf ("CAP_%zu", i);
      strv_append (&names, unknown ? unknown : cap_names[i]);
    }
  return strv_join (names, " ");
}

/* ---- G3, G4, G7 (rlimits), G10 (env): the process ---- */

static void
harden_caps (struct spec_caps *caps, struct override_list *ov)
{
  struct
  {
    const char *name;
    uint64_t *set;
  } sets[] = {
    { "bounding", &caps->bounding },       { "effective", &caps->effective },
    { "inheritable", &caps->inheritable }, { "permitted", &caps->permitted },
    { "ambient", &caps->ambient },
  };

  for (size_t i = 0; i < sizeof (sets) / sizeof (sets[0]); i++)
    {
      if (*sets[i].set != 0)
        {
          cleanup_free char *path
              = xasprintf ("process.capabilities.%s", sets[i].name);
          cleanup_free char *names = caps_text (*sets[i].set);
          override_list_add (ov, OVERRIDE_REMOVED, path, names, "none");
        }
      *sets[i].set = 0;
    }
  caps->present = true;
}

static char *
rlimit_text (const struct spec_rlimit *r)
{
  return xasprintf ("soft=%" PRIu64 " hard=%" PRIu64, r->soft, r->hard);
}

/* Never above cap, and never above what config.json asked. */
static void
cap_rlimit (struct spec_process *proc, int resource, const char *type,
            uint64_t cap, struct override_list *ov)
{
  cleanup_free char *path = xasprintf ("process.rlimits.%s", type);
  bool found = false;

  for (size_t i = 0; i < proc->n_rlimits; i++)
    {
      struct spec_rlimit *r = &proc->rlimits[i];
      cleanup_free char *asked = NULL, *enforced = NULL;

      if (r->resource != resource)
        continue;
      found = true;
      if (r->soft <= cap && r->hard <= cap)
        continue;
      asked = rlimit_text (r);
      if (r->soft > cap)
        r->soft = cap;
      if (r->hard > cap)
        r->hard = cap;
      enforced = rlimit_text (r);
      override_list_add (ov, OVERRIDE_CHANGED, path, asked, enforced);
    }
  if (!found)
    {
      struct spec_rlimit *r;
      cleanup_free char *enforced = NULL;

      proc->rlimits = xrealloc (proc->rlimits, (proc->n_rlimits + 1)
                                                   * sizeof (*proc->rlimits));
      r = &proc->rlimits[proc->n_rlimits++];
      *r = (struct spec_rlimit){
        .resource = resource, .type = xstrdup (type), .soft = cap, .hard = cap
      };
      enforced = rlimit_text (r);
      override_list_add (ov, OVERRIDE_ADDED, path, NULL, enforced);
    }
}

static bool
is_credential_name (const char *name, char *const *patterns)
{
  for (size_t i = 0; patterns && patterns[i]; i++)
    if (fnmatch (patterns[i], name, FNM_CASEFOLD) == 0)
      return true;
  return false;
}

/* Only the NAME goes into the override list: the value is the secret. */
static void
scrub_env (char **env, char *const *patterns, struct override_list *ov)
{
  size_t kept = 0;

  for (size_t i = 0; env && env[i]; i++)
    {
      cleanup_free char *name = strndup (env[i], strcspn (env[i], "="));
      if (name == NULL)
        name = xstrdup ("");
      if (is_credential_name (name, patterns))
        {
          override_list_add (ov, OVERRIDE_REMOVED, "process.env", name, NULL);
          free (env[i]);
          continue;
        }
      env[kept++] = env[i];
    }
  if (env)
    env[kept] = NULL;
}

void
process_bounds_apply (struct spec_process *proc, const struct process_bounds *b,
                      struct override_list *ov)
{
  harden_caps (&proc->caps, ov);
  if (!proc->no_new_privileges)
    {
      override_list_add (ov, OVERRIDE_CHANGED, "process.noNewPrivileges",
                         "false", "true");
      proc->no_new_privileges = true;
    }
  cap_rlimit (proc, RLIMIT_CORE, "RLIMIT_CORE", 0, ov);
  cap_rlimit (proc, RLIMIT_NOFILE, "RLIMIT_NOFILE", b->nofile, ov);
  scrub_env (proc->env, b->credential_env, ov);
  /* A negative score would shield hostile code from the OOM killer at the
   * expense of the host's processes. */
  if (proc->has_oom_score_adj && proc->oom_score_adj < 0)
    {
      cleanup_free char *asked = xasprintf ("%d", proc->oom_score_adj);
      override_list_add (ov, OVERRIDE_CHANGED, "process.oomScoreAdj", asked,
                         "0");
      proc->oom_score_adj = 0;
    }
}
