/* moat features: runtime-spec features.md, so engines know what moat does. */
#include <ctype.h>
#include <seccomp.h>
#include <string.h>
#include <sys/capability.h>
#include <stdio.h>
#include <unistd.h>

#include "../oci/json.h"
#include "../oci/spec.h"
#include "../runtime/cgroup/cgroup.h"
#include "../runtime/userns/idmap.h"
#include "../runtime/init/landlock.h"
#include "../runtime/init/selinux.h"
#include "../policy/profile.h"
#include "../policy/verdicts.h"
#include "../runtime/userns/userns.h"
#include "../lib/util.h"
#include "cmd.h"

static void
strings (struct json_writer *w, const char *key, const char *const *v)
{
  jw_key (w, key);
  jw_array_begin (w);
  for (; *v; v++)
    jw_string (w, *v);
  jw_array_end (w);
}

VERB (features)
{
  static const char *const mount_opts[] = {
    "async",         "atime",       "bind",       "defaults", "dev",
    "diratime",      "dirsync",     "exec",       "iversion", "lazytime",
    "loud",          "mand",        "noatime",    "nodev",    "nodiratime",
    "noexec",        "noiversion",  "nolazytime", "nomand",   "norelatime",
    "nostrictatime", "nosuid",      "private",    "rbind",    "relatime",
    "remount",       "ro",          "rprivate",   "rro",      "rshared",
    "rslave",        "runbindable", "rw",         "shared",   "silent",
    "slave",         "strictatime", "suid",       "sync",     "tmpcopyup",
    "unbindable",    NULL
  };
  static const char *const actions[]
      = { "SCMP_ACT_ALLOW",       "SCMP_ACT_ERRNO",
          "SCMP_ACT_KILL",        "SCMP_ACT_KILL_PROCESS",
          "SCMP_ACT_KILL_THREAD", "SCMP_ACT_LOG",
          "SCMP_ACT_NOTIFY",      "SCMP_ACT_TRACE",
          "SCMP_ACT_TRAP",        NULL };
  static const char *const ops[]
      = { "SCMP_CMP_EQ", "SCMP_CMP_GE",        "SCMP_CMP_GT", "SCMP_CMP_LE",
          "SCMP_CMP_LT", "SCMP_CMP_MASKED_EQ", "SCMP_CMP_NE", NULL };
  static const char *const archs[]
      = { "SCMP_ARCH_X86_64",  "SCMP_ARCH_X86", "SCMP_ARCH_X32",
          "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM", NULL };
  static const char *const sflags[]
      = { "SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
          "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", NULL };
  struct json_writer *w = json_writer_new (true);
  cleanup_free char *text = NULL;

  jw_object_begin (w);
  jw_key (w, "ociVersionMin");
  jw_string (w, "1.0.0");
  jw_key (w, "ociVersionMax");
  jw_string (w, "1.2.0");
  /* The parser's own name tables: what it knows is what is listed. */
  jw_key (w, "hooks");
  jw_array_begin (w);
  for (int k = 0; k < HOOK__MAX; k++)
    jw_string (w, hook_kind_name (k));
  jw_array_end (w);
  strings (w, "mountOptions", mount_opts);
  jw_key (w, "linux");
  jw_object_begin (w);
  jw_key (w, "namespaces");
  jw_array_begin (w);
  for (int t = 0; t < NS__MAX; t++)
    jw_string (w, ns_table[t].config_name);
  jw_array_end (w);
  /* What the runtime knows (containerd 2.x reads this); the profile drops
   * them all, said in run.moat.capabilities below. */
  jw_key (w, "capabilities");
  jw_array_begin (w);
  for (int c = 0; c <= CAP_LAST_CAP; c++)
    {
      cleanup_free char *name = spec_cap_name (c);
      jw_string (w, name);
    }
  jw_array_end (w);
  jw_key (w, "cgroup");
  jw_object_begin (w);
  jw_key (w, "v1");
  jw_bool (w, true);
  jw_key (w, "v2");
  jw_bool (w, true);
  jw_key (w, "systemd");
  jw_bool (w, false);
  jw_key (w, "systemdUser");
  jw_bool (w, false);
  jw_object_end (w);
  jw_key (w, "seccomp");
  jw_object_begin (w);
  jw_key (w, "enabled");
  jw_bool (w, true);
  strings (w, "actions", actions);
  strings (w, "operators", ops);
  strings (w, "archs", archs);
  strings (w, "supportedFlags", sflags);
  jw_object_end (w);
  jw_key (w, "apparmor");
  jw_object_begin (w);
  jw_key (w, "enabled");
  jw_bool (w, false);
  jw_object_end (w);
  jw_key (w, "selinux");
  jw_object_begin (w);
  jw_key (w, "enabled");
  jw_bool (w, selinux_enabled ());
  jw_object_end (w);
  jw_key (w, "intelRdt");
  jw_object_begin (w);
  jw_key (w, "enabled");
  jw_bool (w, false);
  jw_object_end (w);
  /* G12, probed: moat idmaps the rootfs and the engines' volumes itself
   * (config.json's idmap options are not taken). */
  jw_key (w, "mountExtensions");
  jw_object_begin (w);
  jw_key (w, "idmap");
  jw_object_begin (w);
  jw_key (w, "enabled");
  jw_bool (w, userns_idmap_supported ());
  jw_object_end (w);
  jw_object_end (w);
  jw_object_end (w);
  jw_key (w, "annotations");
  jw_object_begin (w);
  jw_key (w, "org.opencontainers.runc.checkpoint.enabled");
  jw_string (w, "false");
  jw_key (w, "run.moat.version");
  jw_string (w, MOAT_VERSION);
  jw_key (w, "run.moat.profiles");
  jw_string (w, "strict,egress");
  /* process.selinuxLabel and linux.mountLabel hold only where it is on. */
  jw_key (w, "run.moat.selinux");
  jw_string (w, selinux_status ());
  jw_key (w, "run.moat.capabilities");
  jw_string (w, "none: every profile drops all capabilities (G3); names in "
                "process.capabilities are checked, then dropped");
  /* Which G1 mechanism holds on this host (SPEC: the fallback where no
   * cgroup v2 hierarchy exists). */
  {
    enum cgroup_mode mode;
    jw_key (w, "run.moat.network-guard");
    jw_string (w, cgroup_mode (&mode, NULL) == 0 && mode == CGROUP_MODE_V1
                      ? "fallback"
                      : "cgroup-bpf");
  }
  /* SCMP_ACT_NOTIFY: for whom (Podman's seccomp agents). */
  jw_key (w, "run.moat.seccomp-notify");
  jw_string (w, "only for the agents the operator config lists "
                "(seccomp_agents): listenerPath comes from config.json; "
                "moat's built-in filter stays above the agent's; exec'd "
                "processes get ENOSYS for notified syscalls");
  /* G13: executable memfds refused where the kernel has the sysctl. */
  jw_key (w, "run.moat.memfd-noexec");
  jw_string (w, access ("/proc/sys/vm/memfd_noexec", F_OK) == 0
                    ? "2"
                    : "unavailable (kernel before 6.3)");
  /* G12: what holds on this kernel, and the operator's choice. */
  {
    struct profile *p = NULL;
    struct operator_config *config = NULL;
    /* An unreadable operator config is create's error to report. */
    profile_load (ctx->g.config, ctx->g.profile_name, &p, &config, NULL);
    jw_key (w, "run.moat.userns");
    jw_string (w, p && !p->userns               ? "off (operator config)"
                  : !userns_kernel_supported () ? "unavailable (kernel)"
                  : userns_idmap_supported ()
                      ? "on, idmapped mounts"
                      : "on, no idmapped mounts (files show as nobody)");
    /* An engine's overlay rootfs: rebuilt from idmapped layers (6.8). */
    jw_key (w, "run.moat.userns-overlay");
    jw_string (w, idmap_overlay_supported ()
                      ? "rebuilt from idmapped layers"
                      : "not idmapped (kernel before 6.8): host-owned files "
                        "show as nobody");
    /* G14: what a container gets here ("abi N: ..." or why none). */
    {
      cleanup_free char *ll = profile_landlock_verdict (
          config ? config->landlock : PROFILE_LANDLOCK_AUTO, landlock_abi ());
      jw_key (w, "run.moat.landlock");
      jw_string (w, ll);
    }
    profile_free (p);
    operator_config_free (config);
  }
  jw_object_end (w);
  jw_object_end (w);
  text = json_writer_finish (w);
  printf ("%s\n", text);
  return 0;
}
