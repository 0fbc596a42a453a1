/* SELinux labels from config.json, applied where the host enables SELinux
 * (libselinux): process.selinuxLabel is the exec label of the payload and
 * of every process `moat exec` starts; linux.mountLabel goes on the tmpfs
 * mounts (the profile's scratch /tmp and /var/tmp among them) as
 * context="LABEL". On a host without SELinux no label can hold: they are
 * ignored, and create says so on stderr. */
#ifndef MOAT_SELINUX_H
#define MOAT_SELINUX_H

#include <stdbool.h>
#include <stdio.h>

#include "../../lib/error.h"
#include "../../oci/spec.h"

/* libselinux's calls, behind a seam: tests put a stand-in here. */
struct selinux_backend
{
  int (*is_enabled) (void);                  /* is_selinux_enabled () */
  int (*set_exec_label) (const char *label); /* setexeccon (): 0, -1 errno */
};
extern const struct selinux_backend *selinux_backend;

bool selinux_enabled (void);
/* Is selinuxfs mounted (two statfs calls, no library)? Only then is
 * libselinux loaded: a statically linked moat hands such a host's every
 * verb to moat-dl (lib/dynlib.h). */
bool selinux_fs_mounted (void);
/* For `moat features` and `moat --version`: "selinux" or "selinux: not
 * enabled on this host". */
const char *selinux_status (void);
/* The label of the next execve (NULL or "": none). A no-op where SELinux
 * is off. */
int selinux_set_exec_label (const char *label, struct moat_error **err);
/* On a hardened spec at create: the mount label onto every tmpfs mount
 * where SELinux is on (a label with anything but the characters of an
 * SELinux context is refused); where it is off, a label asked for is told
 * to warn (may be NULL) as ignored. */
int selinux_apply_mount_label (struct spec *s, FILE *warn,
                               struct moat_error **err);

#endif
