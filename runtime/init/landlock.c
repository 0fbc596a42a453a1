/* G14: a Landlock ruleset made from the mount plan (mount_ops.h), so that
 * the same rules hold twice: once in the mounts, once in the process.
 *
 * Writes: every right that changes the filesystem (write, truncate,
 * create, remove, link and rename) is allowed beneath each mount the plan
 * leaves writable (scratch tmpfs, /dev/shm, /dev/mqueue, /dev/pts, /proc,
 * writable binds: volumes, the engines' per-container files) and on the
 * device nodes it binds, nowhere else. Reads are not handled: the container
 * reads what its mounts show it.
 *
 * Execution: Landlock rules hold for a whole tree and cannot carve a tree
 * out of a larger one, so "everything but the noexec mounts" is written as
 * one rule per entry of each directory on the way to a noexec mount: "/"
 * holds /usr, /bin ... (a rule each) and /tmp (none); /var is walked for
 * /var/tmp. The entries are read once, by the init, after the last mount:
 * the rootfs is read-only by then, so no entry comes later. The init
 * hands the list of paths it granted to moat, which keeps it in the state
 * dir: a `moat exec` adds the same rules from it, opening each path
 * without following a symlink, and reads no directory. A name holding a
 * newline is never granted (it could not be listed).
 *
 * Scopes (ABI 6): the init's payload and its children get a domain of
 * their own with abstract unix sockets and signals scoped to it. A
 * `moat exec` process cannot join that domain (a Landlock domain belongs to
 * the processes that inherit it), so it gets one of its own with abstract
 * unix sockets scoped but not signals: a scoped exec could not `kill 1`.
 * Either way a container that joins a network namespace by path (a pod's)
 * no longer reaches the abstract sockets of the other processes there.
 *
 * ABI 1 is not used: it refuses every rename and link across directories
 * once any filesystem right is handled, which breaks `mv` and package
 * managers. The kernel headers of the build host may be older than the
 * running kernel, so the ABI's numbers are spelled here. */
#include "landlock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mount_ops.h"
#include "../../lib/util.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)                  /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)               /* ABI 3 */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)               /* ABI 6 */

/* What may be granted on a file rather than a directory. */
#define LL_FS_FILE_RIGHTS                                                      \
  (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE)
#define LL_FS_WRITE_RIGHTS                                                     \
  (LL_FS_WRITE_FILE | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_CHAR   \
   | LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | LL_FS_MAKE_FIFO       \
   | LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM | LL_FS_REFER | LL_FS_TRUNCATE)

struct ll_ruleset_attr
{
  uint64_t handled_access_fs;
  uint64_t handled_access_net; /* ABI 4 */
  uint64_t scoped;             /* ABI 6 */
};

struct ll_path_beneath_attr
{
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__ ((packed));

int
landlock_abi (void)
{
  long v = syscall (SYS_landlock_create_ruleset, NULL, 0,
                    LL_CREATE_RULESET_VERSION);
  return v < 0 ? 0 : (int)v;
}

const char *
landlock_decision (const struct spec_kv *annotations, size_t n)
{
  return spec_kv_get (annotations, n, LANDLOCK_ANNOTATION);
}

/* The ABI create chose ("abi N: ..."); 0: none. */
static int
decided_abi (const char *v)
{
  char *end = NULL;
  long abi;

  if (v == NULL || strncmp (v, "abi ", 4) != 0)
    return 0;
  errno = 0;
  abi = strtol (v + 4, &end, 10);
  if (errno || end == v + 4 || *end != ':' || abi < LANDLOCK_MIN_ABI
      || abi > 1000)
    return 0;
  return (int)abi;
}

/* Lines of text grown from a small start: every page the init touches
 * once it is in its cgroup counts against the container's memory limit
 * (open_memstream's first buffer is 8 KiB). */
struct line_list
{
  char *s;
  size_t len, cap;
};

static void
line_list_add (struct line_list *l, const char *line)
{
  size_t n = strlen (line);

  if (l->len + n + 2 > l->cap)
    {
      l->cap = 2 * l->cap + n + 2 > 256 ? 2 * l->cap + n + 2 : 256;
      l->s = xrealloc (l->s, l->cap);
    }
  memcpy (l->s + l->len, line, n);
  l->len += n;
  l->s[l->len++] = '\n';
  l->s[l->len] = '\0';
}

/* The O_PATH fds behind the rules added so far, closed together: the
 * kernel keeps what a rule needs of its fd (the inode). */
#define HELD_MAX 64

struct ruleset
{
  int fd;
  uint64_t handled;
  /* Destinations of the noexec mounts: no execute right beneath them. */
  const char **noexec;
  size_t n_noexec;
  struct line_list *exec_list; /* the paths granted execute; may be NULL */
  int held[HELD_MAX];
  size_t n_held;
};

/* One close_range where the held fds are all the fds of a range (opened
 * one after another, they mostly are), else a close each. */
static void
close_held (struct ruleset *rs)
{
  int lo = INT32_MAX, hi = -1;

  for (size_t i = 0; i < rs->n_held; i++)
    {
      lo = rs->held[i] < lo ? rs->held[i] : lo;
      hi = rs->held[i] > hi ? rs->held[i] : hi;
    }
  if (rs->n_held > 0 && (size_t)(hi - lo) + 1 == rs->n_held
      && close_range ((unsigned)lo, (unsigned)hi, 0) == 0)
    rs->n_held = 0;
  while (rs->n_held > 0)
    close (rs->held[--rs->n_held]);
}

/* fd is the ruleset's to close from here on. */
static void
hold_fd (struct ruleset *rs, int fd)
{
  if (rs->n_held == HELD_MAX)
    close_held (rs);
  rs->held[rs->n_held++] = fd;
}

/* A file (or a device node) takes only the file rights: the kernel says
 * so with EINVAL, and then gets those alone. That is one syscall more
 * for a bind of a single file and a stat less for every directory. */
static int
add_rule (const struct ruleset *rs, int fd, uint64_t access, const char *path,
          struct moat_error **err)
{
  struct ll_path_beneath_attr attr
      = { .parent_fd = fd, .allowed_access = access & rs->handled };
  long r;

  if (attr.allowed_access == 0)
    return 0;
  r = syscall (SYS_landlock_add_rule, rs->fd, LL_RULE_PATH_BENEATH, &attr, 0);
  if (r < 0 && errno == EINVAL
      && (attr.allowed_access & ~LL_FS_FILE_RIGHTS) != 0)
    {
      attr.allowed_access &= LL_FS_FILE_RIGHTS;
      r = attr.allowed_access == 0 ? 0
                                   : syscall (SYS_landlock_add_rule, rs->fd,
                                              LL_RULE_PATH_BENEATH, &attr, 0);
    }
  if (r < 0)
    return moat_fail (err, errno, "landlock: a rule for %s", path);
  return 0;
}

/* Where path is missing (a mount the plan skipped) there is nothing to
 * allow. */
static int
allow_path (struct ruleset *rs, const char *path, uint64_t access,
            struct moat_error **err)
{
  int fd = open (path, O_PATH | O_CLOEXEC);

  if (fd < 0)
    return errno == ENOENT ? 0 : moat_fail (err, errno, "landlock: %s", path);
  hold_fd (rs, fd);
  return add_rule (rs, fd, access, path, err);
}

/* Is a later op of the plan making mount i's destination read-only (the
 * /dev tmpfs, once its nodes are in)? */
static bool
made_readonly_later (const struct mount_plan *plan, size_t i)
{
  for (size_t j = i + 1; j < plan->n; j++)
    if (plan->v[j].kind == MOUNT_OP_ATTRS
        && (plan->v[j].attrs & MOUNT_ATTR_RDONLY)
        && strcmp (plan->v[j].dest, plan->v[i].dest) == 0)
      return true;
  return false;
}

static int
allow_writes (struct ruleset *rs, const struct mount_plan *plan,
              struct moat_error **err)
{
  int r = 0;

  for (size_t i = 0; i < plan->n && r == 0; i++)
    {
      const struct mount_op *op = &plan->v[i];
      switch (op->kind)
        {
        case MOUNT_OP_BIND:
        case MOUNT_OP_MOUNT:
          if (op->flags & MS_NOEXEC)
            rs->noexec[rs->n_noexec++] = op->dest;
          /* An rbind read-only at its top alone keeps its submounts as
           * they are (runc's "ro"): beneath it, the mounts decide. */
          if ((!(op->flags & MS_RDONLY)
               || (op->kind == MOUNT_OP_BIND && (op->flags & MS_REC)
                   && !op->recursive_ro))
              && !made_readonly_later (plan, i))
            r = allow_path (rs, op->dest, LL_FS_WRITE_RIGHTS, err);
          break;
        case MOUNT_OP_DEV_NODE:
          r = allow_path (rs, op->dest, LL_FS_WRITE_FILE | LL_FS_TRUNCATE, err);
          break;
        case MOUNT_OP_ATTRS:
          if (op->attrs & MOUNT_ATTR_NOEXEC)
            rs->noexec[rs->n_noexec++] = op->dest;
          break;
        case MOUNT_OP_ROOT_ATTRS:
          if (!(op->attrs & MOUNT_ATTR_RDONLY))
            r = allow_path (rs, "/", LL_FS_WRITE_RIGHTS, err);
          break;
        default:
          break;
        }
    }
  /* No rule for a /dev/console: moat binds none (a terminal is a pty of
   * /dev/pts), so one there was put by someone else (a hook). */
  return r;
}

/* 1: path is a noexec destination; 2: one lies beneath path; 0: neither. */
static int
noexec_relation (const struct ruleset *rs, const char *path)
{
  size_t n = strlen (path);
  int rel = 0;

  for (size_t i = 0; i < rs->n_noexec; i++)
    {
      const char *d = rs->noexec[i];
      if (strcmp (d, path) == 0)
        return 1;
      if (strncmp (d, path, n) == 0 && d[n] == '/')
        rel = 2;
    }
  return rel;
}

static int allow_exec_in (struct ruleset *rs, int dir_fd, const char *path,
                          int depth, struct moat_error **err);

/* Execute beneath entry name (of type d_type) of directory dir_fd, or
 * beneath the entries of the directory it is when a noexec mount lies
 * below it. */
static int
allow_exec_entry (struct ruleset *rs, int dir_fd, const char *dir_path,
                  const char *name, unsigned char type, int depth,
                  struct moat_error **err)
{
  cleanup_free char *child = NULL;
  struct stat st;
  int rel, fd, r;

  /* A link runs what it points to, judged there. */
  if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0 || strchr (name, '\n')
      || type == DT_LNK)
    return 0;
  child
      = xasprintf ("%s/%s", strcmp (dir_path, "/") == 0 ? "" : dir_path, name);
  rel = noexec_relation (rs, child);
  if (rel == 1)
    return 0;
  if (rel == 2 && (type == DT_DIR || type == DT_UNKNOWN))
    {
      fd = openat (dir_fd, name,
                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0)
        {
          r = allow_exec_in (rs, fd, child, depth + 1, err);
          hold_fd (rs, fd);
          return r;
        }
      /* Unreadable, or a link: nothing beneath it may run. Not a
       * directory: a file, granted below. */
      if (type == DT_DIR || errno != ENOTDIR)
        return 0;
    }
  fd = openat (dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return 0;
  hold_fd (rs, fd);
  if (type == DT_UNKNOWN && (fstat (fd, &st) < 0 || S_ISLNK (st.st_mode)))
    return 0;
  /* Execute is a file right: valid on a directory too. */
  r = add_rule (rs, fd, LL_FS_EXECUTE, child, err);
  if (r == 0 && rs->exec_list)
    line_list_add (rs->exec_list, child);
  return r;
}

/* Execute beneath every entry of directory dir_fd (at path, open for
 * reading) except the noexec destinations, walking down to those below an
 * entry. getdents64 itself: a DIR would cost a stat, two fcntl and a
 * 32 KiB buffer per directory. Its buffer is 2 KiB of stack, 32 levels
 * of it at most: with 8 KiB from the heap and the exec list in an
 * open_memstream, `true` needed 16 KiB more memory limit with Landlock
 * on than off (bench/ROUNDS.md, round ten). */
static int
allow_exec_in (struct ruleset *rs, int dir_fd, const char *path, int depth,
               struct moat_error **err)
{
  char buf[2048] __attribute__ ((aligned (8)));
  ssize_t n;
  int r = 0;

  if (depth > 32)
    return 0; /* nothing beneath it may run */
  /* An error reading stops the walk: what is left gets no right. */
  while (r == 0 && (n = getdents64 (dir_fd, buf, sizeof (buf))) > 0)
    for (ssize_t off = 0; r == 0 && off < n;)
      {
        const struct dirent64 *e = (const struct dirent64 *)(buf + off);
        r = allow_exec_entry (rs, dir_fd, path, e->d_name, e->d_type, depth,
                              err);
        off += e->d_reclen;
      }
  return r;
}

/* The execute rules from the init's list: each path opened without
 * following a symlink anywhere (a payload may have swapped a directory
 * of a writable mount for one since); a path gone gets no rule. */
static int
allow_exec_listed (struct ruleset *rs, const char *list,
                   struct moat_error **err)
{
  const char *p = list;

  while (*p)
    {
      const char *nl = strchr (p, '\n');
      size_t n = nl ? (size_t)(nl - p) : strlen (p);
      cleanup_free char *path = xasprintf ("%.*s", (int)n, p);
      struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                              .resolve = RESOLVE_NO_SYMLINKS };
      int fd, r;

      p += n + (nl != NULL);
      if (path[0] != '/')
        continue;
      fd = (int)syscall (SYS_openat2, AT_FDCWD, path, &how, sizeof (how));
      if (fd < 0)
        {
          if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR)
            continue;
          return moat_fail (err, errno, "landlock: %s", path);
        }
      hold_fd (rs, fd);
      r = add_rule (rs, fd, LL_FS_EXECUTE, path, err);
      if (r < 0)
        return r;
    }
  return 0;
}

/* Execute from exec_list where there is one, else from a walk of the
 * directories down from /, whose grants go to *ret_exec_list. */
static int
allow_exec (struct ruleset *rs, const char *exec_list, char **ret_exec_list,
            struct moat_error **err)
{
  struct line_list listed = { 0 };
  int root, r;

  if (exec_list && exec_list[0])
    return allow_exec_listed (rs, exec_list, err);
  root = open ("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return moat_fail (err, errno, "landlock: opening /");
  if (ret_exec_list)
    rs->exec_list = &listed;
  r = allow_exec_in (rs, root, "/", 0, err);
  hold_fd (rs, root); /* not before: a full hold_fd closes what it holds */
  rs->exec_list = NULL;
  if (r == 0 && ret_exec_list)
    *ret_exec_list = steal_pointer (&listed.s);
  free (listed.s);
  return r;
}

int
landlock_prepare (const struct mount_plan *plan, const char *decision,
                  bool for_init, const char *exec_list, char **ret_exec_list,
                  int *ret_fd, struct moat_error **err)
{
  int abi = decided_abi (decision);
  cleanup_free const char **noexec = NULL;
  struct ll_ruleset_attr attr = { 0 };
  size_t attr_size = sizeof (attr.handled_access_fs);
  struct ruleset rs = { .fd = -1 };
  int r;

  *ret_fd = -1;
  if (abi == 0)
    return 0;
  /* An op whose options could not be read has lost its flags (noexec,
   * ro): rules built from it would let through what the mounts refuse. */
  for (size_t i = 0; i < plan->n; i++)
    if (plan->v[i].error)
      return moat_fail (err, 0, "landlock: %s", plan->v[i].error);
  rs.handled = LL_FS_WRITE_RIGHTS | LL_FS_EXECUTE;
  if (abi < 3)
    rs.handled &= ~LL_FS_TRUNCATE;
  attr.handled_access_fs = rs.handled;
  if (abi >= 6)
    {
      attr.scoped
          = LL_SCOPE_ABSTRACT_UNIX_SOCKET | (for_init ? LL_SCOPE_SIGNAL : 0);
      attr_size = sizeof (attr);
    }
  rs.fd = (int)syscall (SYS_landlock_create_ruleset, &attr, attr_size, 0);
  if (rs.fd < 0)
    return moat_fail (err, errno, "landlock: creating the ruleset (abi %d)",
                      abi);
  noexec = xmalloc ((plan->n + 1) * sizeof (*noexec));
  rs.noexec = noexec;
  r = allow_writes (&rs, plan, err);
  if (r == 0)
    r = allow_exec (&rs, exec_list, ret_exec_list, err);
  close_held (&rs);
  if (r < 0)
    {
      close (rs.fd);
      return r;
    }
  *ret_fd = rs.fd;
  return 0;
}

int
landlock_enforce (int fd, struct moat_error **err)
{
  int r = 0;

  if (fd < 0)
    return 0;
  if (syscall (SYS_landlock_restrict_self, fd, 0) < 0)
    r = moat_fail (err, errno, "landlock: restricting the process");
  close (fd);
  return r;
}
