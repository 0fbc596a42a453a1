/* G12, the mechanism (see userns.h): the pool of host-id blocks, the maps,
 * the namespaces joined for the init, idmapped mounts. */
#include "userns.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../cgroup/cgroup.h"
#include "../init/linux.h"
#include "../../lib/util.h"

bool
userns_moat_maps (const struct spec *s)
{
  const struct spec_linux *l = &s->linux_;
  return l->ns[NS_USER].present && l->ns[NS_USER].path == NULL
         && l->n_uid_mappings == 0 && l->n_gid_mappings == 0;
}

/* ---- the pool ---- */

/* The pool dir, locked: every record is made, judged and removed under
 * this lock, so a stale record is never mistaken for one just made. */
static int
pool_open_locked (const char *dir, int *ret_dirfd, int *ret_lockfd,
                  struct moat_error **err)
{
  cleanup_close int dfd = -1;
  cleanup_close int lock = -1;
  struct stat st;

  if (mkdir (dir, 0700) < 0 && errno != EEXIST)
    return moat_fail (err, errno, "user namespace id pool %s", dir);
  dfd = open (dir, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0 || fstat (dfd, &st) < 0)
    return moat_fail (err, errno, "user namespace id pool %s", dir);
  /* Whoever may write here may hand one block to two containers. */
  if (st.st_uid != geteuid () || (st.st_mode & 022))
    return moat_fail (err, EPERM,
                      "user namespace id pool %s: not owned by root, or "
                      "writable by others",
                      dir);
  lock = openat (dfd, ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (lock < 0)
    return moat_fail (err, errno, "user namespace id pool %s/.lock", dir);
  if (TEMP_FAILURE_RETRY (flock (lock, LOCK_EX)) < 0)
    return moat_fail (err, errno, "locking the id pool %s", dir);
  *ret_dirfd = steal_fd (&dfd);
  *ret_lockfd = steal_fd (&lock);
  return 0;
}

/* The record names the state dirs of the containers holding the block,
 * one a line: the first that took it, and those that adopted its user
 * namespace since (userns_block_adopt). */
static char *
record_read (int dfd, const char *name)
{
  char *text = NULL;
  if (read_file_at (dfd, name, 64 * (PATH_MAX + 16), &text, NULL) < 0)
    return NULL;
  return text;
}

/* Each line of a record in turn (one holder's state dir a line): *pos
 * walks TEXT; the line is *ret_line, *ret_n bytes, without its newline. */
static bool
record_next_line (const char **pos, const char **ret_line, size_t *ret_n)
{
  const char *l = *pos;
  if (l == NULL || *l == '\0')
    return false;
  *ret_line = l;
  *ret_n = strcspn (l, "\n");
  *pos = l + *ret_n + (l[*ret_n] == '\n');
  return true;
}

/* Is the state dir OWNER (a line of a record) gone? */
static bool
owner_gone (const char *owner, size_t n)
{
  cleanup_free char *path = strndup (owner, n);
  return path == NULL || path[0] != '/'
         || (faccessat (AT_FDCWD, path, F_OK, AT_SYMLINK_NOFOLLOW) < 0
             && errno == ENOENT);
}

/* Stale: the state dir of every holder is gone (deleted by force after a
 * crash, or never written). An unreadable record is not judged stale. */
static bool
record_stale (int dfd, const char *name)
{
  cleanup_free char *text = record_read (dfd, name);
  const char *pos = text, *l;
  size_t n;

  if (text == NULL)
    return false;
  while (record_next_line (&pos, &l, &n))
    if (!owner_gone (l, n))
      return false;
  return true;
}

/* Drop the lines naming WANT from the record NAME; the block is free (the
 * record removed) once no line is left. */
static void
record_drop (int dfd, const char *name, const char *want)
{
  cleanup_free char *text = record_read (dfd, name);
  cleanup_free char *kept = NULL;
  size_t n_kept = 0, w = strlen (want), n;
  const char *pos = text, *l;

  if (text == NULL)
    return;
  kept = xcalloc (strlen (text) + 1, 1);
  while (record_next_line (&pos, &l, &n))
    if (!(n == w && strncmp (l, want, n) == 0))
      {
        memcpy (kept + n_kept, l, n);
        n_kept += n;
        kept[n_kept++] = '\n';
      }
  if (n_kept == 0)
    unlinkat (dfd, name, 0);
  else if (n_kept != strlen (text))
    write_file_atomic (dfd, name, kept, n_kept, 0600);
}

static int
record_take (int dfd, const char *name, const char *owner)
{
  cleanup_close int fd = -1;
  int r;

  fd = openat (dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
               0600);
  if (fd < 0 && errno == EEXIST && record_stale (dfd, name))
    {
      if (unlinkat (dfd, name, 0) < 0)
        return -errno;
      fd = openat (dfd, name,
                   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    }
  if (fd < 0)
    return -errno;
  r = write_all (fd, owner, strlen (owner));
  if (r < 0)
    unlinkat (dfd, name, 0);
  return r;
}

int
userns_block_alloc (const struct operator_config *cfg, const char *root_path,
                    const char *id, uint32_t *ret_first,
                    struct moat_error **err)
{
  cleanup_close int dfd = -1;
  cleanup_close int lock = -1;
  cleanup_free char *owner = xasprintf ("%s/%s\n", root_path, id);
  uint32_t start = 0;
  int r;

  if (cfg->userns_blocks == 0)
    return moat_fail (err, 0, "user namespace: the id pool is empty");
  r = pool_open_locked (cfg->userns_pool_dir, &dfd, &lock, err);
  if (r < 0)
    return r;
  /* A random start: few records to step over when most blocks are free. */
  if (getrandom (&start, sizeof (start), GRND_NONBLOCK) != sizeof (start))
    start = (uint32_t)getpid ();
  for (uint32_t k = 0; k < cfg->userns_blocks; k++)
    {
      uint32_t idx = (start + k) % cfg->userns_blocks;
      uint32_t first = cfg->userns_first + idx * PROFILE_USERNS_BLOCK;
      char name[16];

      snprintf (name, sizeof (name), "%" PRIu32, first);
      r = record_take (dfd, name, owner);
      if (r == 0)
        {
          *ret_first = first;
          return 0;
        }
      if (r != -EEXIST)
        return moat_fail (err, -r, "user namespace id pool %s/%s",
                          cfg->userns_pool_dir, name);
    }
  return moat_fail (err, 0,
                    "user namespace: every block of the id pool is held "
                    "(%" PRIu32 " blocks from host id %" PRIu32 ", %s)",
                    cfg->userns_blocks, cfg->userns_first,
                    cfg->userns_pool_dir);
}

int
userns_block_take (const struct operator_config *cfg, const char *root,
                   const char *id, char **ret_root_path, uint32_t *ret_first,
                   struct moat_error **err)
{
  char real[PATH_MAX];
  int r;

  if (realpath (root, real) == NULL)
    return moat_fail (err, errno, "state root %s", root);
  r = userns_block_alloc (cfg, real, id, ret_first, err);
  if (r < 0)
    return r;
  *ret_root_path = xstrdup (real);
  return 0;
}

void
userns_block_release (const char *pool_dir, uint32_t first,
                      const char *root_path, const char *id)
{
  cleanup_close int dfd = -1;
  cleanup_close int lock = -1;
  cleanup_free char *want = xasprintf ("%s/%s", root_path, id);
  char name[16];

  if (first == 0 || pool_open_locked (pool_dir, &dfd, &lock, NULL) < 0)
    return;
  snprintf (name, sizeof (name), "%" PRIu32, first);
  record_drop (dfd, name, want);
}

void
userns_block_release_owner (const struct operator_config *cfg,
                            const char *root_path, const char *id)
{
  cleanup_close int dfd = -1;
  cleanup_close int lock = -1;
  cleanup_free char *want = xasprintf ("%s/%s", root_path, id);
  struct dirent *de;
  DIR *d;

  if (pool_open_locked (cfg->userns_pool_dir, &dfd, &lock, NULL) < 0)
    return;
  d = fdopendir (fcntl (dfd, F_DUPFD_CLOEXEC, 3));
  if (d == NULL)
    return;
  while ((de = readdir (d)))
    if (de->d_name[0] != '.')
      record_drop (dfd, de->d_name, want);
  closedir (d);
}

int
userns_block_adopt (const struct operator_config *cfg, const char *root_path,
                    const char *id, userns_holder_fn holds, void *data,
                    uint32_t *ret_first, struct moat_error **err)
{
  cleanup_close int dfd = -1;
  cleanup_close int lock = -1;
  cleanup_free char *mine = xasprintf ("%s/%s\n", root_path, id);
  struct dirent *de;
  DIR *d;
  int r;

  *ret_first = 0;
  r = pool_open_locked (cfg->userns_pool_dir, &dfd, &lock, err);
  if (r < 0)
    return r;
  d = fdopendir (fcntl (dfd, F_DUPFD_CLOEXEC, 3));
  if (d == NULL)
    return moat_fail (err, errno, "user namespace id pool %s",
                      cfg->userns_pool_dir);
  while ((de = readdir (d)) && *ret_first == 0)
    {
      cleanup_free char *text = NULL;
      const char *pos, *l;
      uint64_t first;
      size_t n;

      if (de->d_name[0] == '.' || parse_uint64 (de->d_name, &first) < 0
          || first == 0 || first > UINT32_MAX)
        continue;
      text = record_read (dfd, de->d_name);
      pos = text;
      while (*ret_first == 0 && record_next_line (&pos, &l, &n))
        {
          cleanup_free char *owner = strndup (l, n);
          if (owner && holds (owner, (uint32_t)first, data))
            *ret_first = (uint32_t)first;
        }
      if (*ret_first)
        {
          /* Under the lock, as the holder's record was judged live. */
          cleanup_free char *both
              = xasprintf ("%s%s%s", text,
                           text[strlen (text) - 1] == '\n' ? "" : "\n", mine);
          r = write_file_atomic (dfd, de->d_name, both, strlen (both), 0600);
          if (r < 0)
            *ret_first = 0;
        }
    }
  closedir (d);
  if (r < 0)
    return moat_fail (err, -r, "user namespace id pool %s",
                      cfg->userns_pool_dir);
  return 0;
}

/* ---- maps ---- */

static int
write_map (pid_t pid, const char *file, const struct spec_idmap *m, size_t n,
           uint32_t first, struct moat_error **err)
{
  char path[64];
  cleanup_free char *buf = NULL;
  int r;

  if (first)
    buf = xasprintf ("0 %" PRIu32 " %u\n", first, PROFILE_USERNS_BLOCK);
  else
    {
      buf = xstrdup ("");
      for (size_t i = 0; i < n; i++)
        {
          char *nb = xasprintf ("%s%u %u %u\n", buf, m[i].container_id,
                                m[i].host_id, m[i].size);
          free (buf);
          buf = nb;
        }
    }
  snprintf (path, sizeof (path), "/proc/%d/%s", pid, file);
  r = write_file_at (AT_FDCWD, path, buf);
  if (r < 0)
    return moat_fail (err, -r, "writing %s", file);
  return 0;
}

int
userns_write_maps (pid_t pid, const struct spec_linux *l, uint32_t first,
                   struct moat_error **err)
{
  int r = write_map (pid, "uid_map", l->uid_mappings, l->n_uid_mappings, first,
                     err);
  if (r == 0)
    r = write_map (pid, "gid_map", l->gid_mappings, l->n_gid_mappings, first,
                   err);
  return r;
}

/* ---- namespaces joined for the init ---- */

static const enum ns_type parent_joined[] = { NS_NET, NS_IPC, NS_UTS };

int
userns_parent_join (const struct spec *s, const int *ns_fds, int *init_fds,
                    int *saved, struct moat_error **err)
{
  for (int t = 0; t < NS__MAX; t++)
    saved[t] = -1;
  for (size_t i = 0; i < sizeof (parent_joined) / sizeof (parent_joined[0]);
       i++)
    {
      enum ns_type t = parent_joined[i];
      char own[64];

      if (ns_fds[t] < 0)
        continue;
      snprintf (own, sizeof (own), "/proc/self/ns/%s", ns_table[t].proc_name);
      saved[t] = open (own, O_RDONLY | O_CLOEXEC);
      if (saved[t] < 0)
        return moat_fail (err, errno, "opening %s", own);
      if (setns (ns_fds[t], 0) < 0)
        return moat_fail (err, errno, "joining %s namespace %s",
                          ns_type_name (t), s->linux_.ns[t].path);
      init_fds[t] = -1;
    }
  return 0;
}

int
userns_parent_restore (int *saved, struct moat_error **err)
{
  int r = 0;
  for (int t = 0; t < NS__MAX; t++)
    {
      if (saved[t] < 0)
        continue;
      if (setns (saved[t], 0) < 0 && r == 0)
        r = moat_fail (err, errno, "going back to moat's %s namespace",
                       ns_type_name (t));
      close (saved[t]);
      saved[t] = -1;
    }
  return r;
}

static int
pseudo_fs (const char *type, int *ret, struct moat_error **err)
{
  cleanup_close int fsfd = fsopen (type, FSOPEN_CLOEXEC);
  int mnt;

  if (fsfd < 0 || fsconfig (fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return moat_fail (err, errno, "making %s for a joined namespace", type);
  mnt = fsmount (fsfd, FSMOUNT_CLOEXEC,
                 MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  if (mnt < 0)
    return moat_fail (err, errno, "making %s for a joined namespace", type);
  *ret = mnt;
  return 0;
}

int
userns_pseudo_mounts (const struct spec *s, const int *init_fds_before,
                      int *src_fds, struct moat_error **err)
{
  for (size_t i = 0; i < s->n_mounts; i++)
    {
      const char *type = s->mounts[i].type;
      int r;

      if (type == NULL || src_fds[i] >= 0)
        continue;
      if (strcmp (type, "sysfs") == 0 && init_fds_before[NS_NET] >= 0)
        r = pseudo_fs ("sysfs", &src_fds[i], err);
      else if (strcmp (type, "mqueue") == 0 && init_fds_before[NS_IPC] >= 0)
        r = pseudo_fs ("mqueue", &src_fds[i], err);
      else
        continue;
      if (r < 0)
        return moat_error_wrap (err, "mount %s", s->mounts[i].destination);
    }
  return 0;
}

/* Is this sysctl of a namespace (net, ipc) joined by path? */
static bool
sysctl_of_joined (const char *key, const int *ns_fds)
{
  static const char *const ipc[]
      = { "kernel.shm", "kernel.msg", "kernel.sem", "fs.mqueue.", NULL };
  if (ns_fds[NS_NET] >= 0 && strncmp (key, "net.", 4) == 0)
    return true;
  for (size_t i = 0; ns_fds[NS_IPC] >= 0 && ipc[i]; i++)
    if (strncmp (key, ipc[i], strlen (ipc[i])) == 0)
      return true;
  return false;
}

/* The sysctls of a joined network or ipc namespace: the init, in a user
 * namespace that does not own it, may not write them; moat, joined to it
 * by now, does, and the init is left the others. */
static int
joined_sysctls (const struct spec *s, const int *ns_fds, uint32_t first,
                struct moat_error **err)
{
  struct spec_linux *l = (struct spec_linux *)&s->linux_;
  size_t keep = 0, n = 0;
  struct spec_kv *mine = xcalloc (l->n_sysctl + 1, sizeof (*mine));
  int r;

  for (size_t i = 0; i < l->n_sysctl; i++)
    if (sysctl_of_joined (l->sysctl[i].key, ns_fds))
      mine[n++] = l->sysctl[i];
    else
      l->sysctl[keep++] = l->sysctl[i];
  l->n_sysctl = keep;
  /* Written from inside, its gids would be the container's: 0 is the
   * block's first id (the profile clamped the range into the block). */
  for (size_t i = 0; first && i < n; i++)
    {
      unsigned long long lo, hi;
      if (strcmp (mine[i].key, "net.ipv4.ping_group_range") == 0
          && sscanf (mine[i].value, "%llu %llu", &lo, &hi) == 2
          && lo < PROFILE_USERNS_BLOCK && hi < PROFILE_USERNS_BLOCK)
        {
          free (mine[i].value);
          mine[i].value = xasprintf ("%llu %llu", first + lo, first + hi);
        }
    }
  r = linux_write_sysctls (mine, n, err);
  for (size_t i = 0; i < n; i++)
    {
      free (mine[i].key);
      free (mine[i].value);
    }
  free (mine);
  return r;
}

bool
userns_has_proc_mount (const struct spec *s)
{
  for (size_t i = 0; i < s->n_mounts; i++)
    if (s->mounts[i].type && strcmp (s->mounts[i].type, "proc") == 0)
      return true;
  return false;
}

int
userns_before_clone (const struct spec *s, const char *rootfs, bool userns,
                     uint32_t first, const int *ns_fds, int *init_fds,
                     int *src_fds, int *ret_tree, int *saved,
                     struct moat_error **err)
{
  int r;

  for (int t = 0; t < NS__MAX; t++)
    saved[t] = -1;
  if (!userns)
    return 0;
  /* procfs shows the mounter's own pid namespace, so moat cannot make it
   * for the init; and from inside, a pid namespace of another user
   * namespace refuses it. Said plainly, not as a mount's EPERM. (A pid
   * namespace of a user namespace joined by path is its own.) */
  if (ns_fds[NS_PID] >= 0 && ns_fds[NS_USER] < 0 && userns_has_proc_mount (s))
    return moat_fail (err, 0,
                      "pid namespace %s: joined by path, it belongs to "
                      "another user namespace than the container's own "
                      "(G12), where /proc cannot be mounted",
                      s->linux_.ns[NS_PID].path);
  /* In a mount namespace joined by path the init finds the rootfs there:
   * the tree would be attached in moat's before the init joins it. */
  if (ns_fds[NS_MOUNT] < 0)
    {
      *ret_tree = open_tree (
          AT_FDCWD, rootfs, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
      if (*ret_tree < 0)
        return moat_fail (err, errno, "root.path %s: open_tree", rootfs);
    }
  r = userns_parent_join (s, ns_fds, init_fds, saved, err);
  if (r == 0)
    r = userns_pseudo_mounts (s, ns_fds, src_fds, err);
  if (r == 0)
    r = joined_sysctls (s, ns_fds, first, err);
  if (r < 0)
    userns_parent_restore (saved, NULL);
  return r;
}

/* ---- the namespace's owner ---- */

int
userns_owner_enter (uint32_t first, struct moat_error **err)
{
  struct __user_cap_header_struct hdr
      = { .version = _LINUX_CAPABILITY_VERSION_3 };
  struct __user_cap_data_struct data[2];

  if (setresuid (-1, first, -1) < 0)
    return moat_fail (err, errno, "setting the user namespace's owner");
  /* The kernel cleared the effective set: permitted is still whole. */
  if (syscall (SYS_capget, &hdr, data) < 0)
    return moat_fail (err, errno, "capget");
  for (int i = 0; i < 2; i++)
    data[i].effective = data[i].permitted;
  if (syscall (SYS_capset, &hdr, data) < 0)
    return moat_fail (err, errno, "capset");
  setfsuid (0);
  if ((uid_t)setfsuid ((uid_t)-1) != 0)
    return moat_fail (err, EPERM, "keeping fsuid 0");
  return 0;
}

uint32_t
userns_owner_for (const struct spec *s, uint32_t first)
{
  const struct spec_linux *l = &s->linux_;
  if (first)
    return first;
  for (size_t i = 0; i < l->n_uid_mappings; i++)
    if (l->uid_mappings[i].container_id == 0 && l->uid_mappings[i].size)
      return l->uid_mappings[i].host_id;
  return l->n_uid_mappings ? l->uid_mappings[0].host_id : 0;
}

int
userns_owner_leave (struct moat_error **err)
{
  /* euid 0 again: the kernel gives back the effective set and fsuid. */
  if (setresuid (-1, 0, -1) < 0)
    return moat_fail (err, errno, "going back to euid 0");
  return 0;
}

int
userns_clone_prepare (struct cgroup *cg, uint32_t first, int **ret_cg_fds,
                      struct moat_error **err)
{
  int r = cgroup_open_self_files (cg, ret_cg_fds, err);
  if (r == 0)
    r = userns_owner_enter (first, err);
  if (r < 0)
    userns_owner_leave (NULL);
  return r;
}

/* ---- idmapped mounts ---- */

int
userns_idmap_tree (int tree, int userns_fd, bool recursive)
{
  struct mount_attr attr
      = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns_fd };
  if (mount_setattr (tree, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0),
                     &attr, sizeof (attr))
      < 0)
    return -errno;
  return 0;
}

bool
userns_kernel_supported (void)
{
  cleanup_free char *max = NULL;
  return access ("/proc/self/ns/user", F_OK) == 0
         && read_file_at (AT_FDCWD, "/proc/sys/user/max_user_namespaces", 32,
                          &max, NULL)
                == 0
         && atoi (max) > 0;
}

bool
userns_idmap_supported (void)
{
  /* No mount and no namespace: EBADF where the call and MOUNT_ATTR_IDMAP
   * exist (an all-zero request would succeed without looking). */
  struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = -1 };
  return mount_setattr (-1, "", AT_EMPTY_PATH, &attr, sizeof (attr)) < 0
         && errno != ENOSYS;
}
