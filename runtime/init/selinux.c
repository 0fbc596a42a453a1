/* SELinux labels: see selinux.h. */
#include "selinux.h"

#include <errno.h>
#include <selinux/selinux.h>
#include <string.h>
#include <sys/statfs.h>

#include "../../lib/dynlib.h"
#include "../../lib/util.h"

/* libselinux (with pcre2) is loaded only where selinuxfs is mounted: on a
 * host without SELinux no verb maps it. */
static struct dynlib libselinux_so = { .soname = "libselinux.so.1" };
DYNLIB_DECLARE (is_selinux_enabled);
DYNLIB_DECLARE (setexeccon);
static const struct dynlib_symbol libselinux_symbols[] = {
  DYNLIB_SYMBOL (is_selinux_enabled),
  DYNLIB_SYMBOL (setexeccon),
};

#define SELINUX_MAGIC 0xf97cff8c

/* Where libselinux itself looks first for selinuxfs; asked once per
 * process (main asks before a verb, the verb again). */
bool
selinux_fs_mounted (void)
{
  static const char *const where[] = { "/sys/fs/selinux", "/selinux" };
  static int mounted = -1;
  struct statfs sfs;
  if (mounted >= 0)
    return mounted;
  mounted = 0;
  for (size_t i = 0; i < sizeof (where) / sizeof (*where); i++)
    if (statfs (where[i], &sfs) == 0 && (uint32_t)sfs.f_type == SELINUX_MAGIC)
      mounted = 1;
  return mounted;
}

static int
lib_is_enabled (void)
{
  static int enabled = -1;
  if (enabled < 0)
    enabled = selinux_fs_mounted ()
                      && dynlib_load (&libselinux_so, libselinux_symbols,
                                      sizeof (libselinux_symbols)
                                          / sizeof (*libselinux_symbols),
                                      NULL)
                             == 0
                  ? sym_is_selinux_enabled ()
                  : 0;
  return enabled;
}

/* Called only where lib_is_enabled said 1: the library is loaded. */
static int
lib_set_exec_label (const char *label)
{
  return sym_setexeccon (label);
}

static const struct selinux_backend libselinux
    = { .is_enabled = lib_is_enabled, .set_exec_label = lib_set_exec_label };
const struct selinux_backend *selinux_backend = &libselinux;

bool
selinux_enabled (void)
{
  return selinux_backend->is_enabled () == 1;
}

const char *
selinux_status (void)
{
  return selinux_enabled () ? "selinux" : "selinux: not enabled on this host";
}

int
selinux_set_exec_label (const char *label, struct moat_error **err)
{
  if (label == NULL || *label == '\0' || !selinux_enabled ())
    return 0;
  if (selinux_backend->set_exec_label (label) < 0)
    return moat_fail (err, errno, "setting the SELinux exec label %s", label);
  return 0;
}

/* A context as SELinux writes them ("system_u:object_r:container_file_t:
 * s0:c1,c2"): nothing that could close the quotes of context="..." and add
 * mount options of its own. */
static bool
label_ok (const char *label)
{
  return strspn (label, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                        "0123456789_.:,-")
         == strlen (label);
}

int
selinux_apply_mount_label (struct spec *s, FILE *warn, struct moat_error **err)
{
  const char *label = s->linux_.mount_label;
  const char *proc_label = s->process ? s->process->selinux_label : NULL;

  /* Bad input whether or not SELinux is on. */
  if (proc_label && !label_ok (proc_label))
    return moat_fail (err, 0, "process.selinuxLabel: not an SELinux context");
  if (label && !label_ok (label))
    return moat_fail (err, 0, "linux.mountLabel: not an SELinux context");
  if (!selinux_enabled ())
    {
      if (warn && label && *label)
        fprintf (warn, "moat: warning: linux.mountLabel ignored: %s\n",
                 selinux_status ());
      if (warn && proc_label && *proc_label)
        fprintf (warn, "moat: warning: process.selinuxLabel ignored: %s\n",
                 selinux_status ());
      return 0;
    }
  if (label == NULL || *label == '\0')
    return 0;
  for (size_t i = 0; i < s->n_mounts; i++)
    {
      struct spec_mount *m = &s->mounts[i];
      cleanup_free char *opt = NULL;
      bool has = false;

      if (m->type == NULL || strcmp (m->type, "tmpfs") != 0)
        continue;
      for (char **o = m->options; o && *o; o++)
        has |= strncmp (*o, "context=", 8) == 0;
      if (has)
        continue;
      /* Quoted: an MCS label holds commas ("s0:c1,c2"). */
      opt = xasprintf ("context=\"%s\"", label);
      strv_append (&m->options, opt);
    }
  return 0;
}
