/* Host paths a payload can influence, opened following no link (see
 * hostpath.h). */
#include "hostpath.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

/* Kernels before 5.6 have no openat2, and some seccomp filters (older
 * container engines' defaults) answer EPERM for it: walk the components
 * with O_NOFOLLOW instead. Each directory on the way is opened O_PATH and
 * checked on its fd, so one swapped for a link meanwhile is refused, not
 * followed. This fallback can go when the baseline kernel is 5.6. */
int
hostpath_open_walking (const char *path, int flags, mode_t mode)
{
  cleanup_free char *copy = xstrdup (path);
  cleanup_close int cur
      = open (path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  char *p = copy;

  if (cur < 0)
    return -errno;
  for (;;)
    {
      char *slash, *rest;
      struct stat st;
      int fd;

      while (*p == '/')
        p++;
      slash = strchr (p, '/');
      for (rest = slash; rest && *rest == '/'; rest++)
        ;
      if (slash == NULL || *rest == '\0')
        {
          /* The last component; "dir/" must be a directory. */
          if (slash)
            *slash = '\0';
          fd = openat (
              cur, *p ? p : ".",
              flags | (slash ? O_DIRECTORY : 0) | O_NOFOLLOW | O_CLOEXEC, mode);
          /* O_DIRECTORY|O_NOFOLLOW on a link fails ENOTDIR: say ELOOP,
           * as openat2 does. */
          if (fd < 0 && errno == ENOTDIR
              && fstatat (cur, *p ? p : ".", &st, AT_SYMLINK_NOFOLLOW) == 0
              && S_ISLNK (st.st_mode))
            return -ELOOP;
          if (fd < 0)
            return -errno;
          /* O_PATH|O_NOFOLLOW opens a link itself rather than fail. */
          if ((flags & O_PATH) && fstat (fd, &st) == 0 && S_ISLNK (st.st_mode))
            {
              close (fd);
              return -ELOOP;
            }
          return fd;
        }
      *slash = '\0';
      fd = openat (cur, p, O_PATH | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        return -errno;
      close (cur);
      cur = fd;
      if (fstat (cur, &st) < 0)
        return -errno;
      if (!S_ISDIR (st.st_mode))
        return S_ISLNK (st.st_mode) ? -ELOOP : -ENOTDIR;
      p = slash + 1;
    }
}

int
hostpath_open (const char *path, int flags, mode_t mode)
{
  static bool no_openat2;
  struct open_how how = {
    .flags = (uint64_t)(flags | O_CLOEXEC),
    .mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
  };

  if (*path == '\0')
    return -ENOENT;
  if (!no_openat2)
    {
      long fd;
      /* EAGAIN: a rename raced the lookup (the kernel asks to retry). */
      for (int i = 0; i < 8; i++)
        {
          fd = syscall (SYS_openat2, AT_FDCWD, path, &how, sizeof (how));
          if (fd >= 0)
            return (int)fd;
          if (errno != EAGAIN)
            break;
        }
      if (errno != ENOSYS && errno != EPERM)
        return -errno;
      if (errno == ENOSYS)
        no_openat2 = true;
    }
  return hostpath_open_walking (path, flags, mode);
}

const char *
hostpath_type_text (mode_t mode)
{
  switch (mode & S_IFMT)
    {
    case S_IFREG:
      return "a regular file";
    case S_IFDIR:
      return "a directory";
    case S_IFIFO:
      return "a FIFO";
    case S_IFSOCK:
      return "a socket";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    case S_IFLNK:
      return "a symbolic link";
    default:
      return "of an unknown type";
    }
}

const char *
hostpath_error_text (int r)
{
  return r == -ELOOP ? HOSTPATH_LINK_TEXT : strerror (-r);
}

static bool
type_allowed (mode_t mode, unsigned types)
{
  return ((types & HOSTPATH_REG) && S_ISREG (mode))
         || ((types & HOSTPATH_DIR) && S_ISDIR (mode))
         || ((types & HOSTPATH_FIFO) && S_ISFIFO (mode));
}

static char *
types_text (unsigned types)
{
  const char *names[3];
  size_t n = 0;

  if (types & HOSTPATH_REG)
    names[n++] = "a regular file";
  if (types & HOSTPATH_DIR)
    names[n++] = "a directory";
  if (types & HOSTPATH_FIFO)
    names[n++] = "a FIFO";
  if (n == 3)
    return xasprintf ("%s, %s or %s only", names[0], names[1], names[2]);
  if (n == 2)
    return xasprintf ("%s or %s only", names[0], names[1]);
  return xasprintf ("%s only", n ? names[0] : "nothing");
}

int
hostpath_open_typed (const char *path, int flags, mode_t mode, unsigned types,
                     const char *what, int *ret_fd, struct moat_error **err)
{
  cleanup_close int fd
      = hostpath_open (path, flags | O_NONBLOCK | O_NOCTTY, mode);
  struct stat st;

  /* A FIFO opened for writing with no reader. */
  if (fd == -ENXIO && (types & HOSTPATH_FIFO) == 0)
    {
      cleanup_free char *want = types_text (types);
      return moat_error_set (err, 0, "%s: a FIFO; %s", what, want);
    }
  if (fd < 0)
    return moat_error_set (err, 0, "%s: %s", what, hostpath_error_text (fd));
  if (fstat (fd, &st) < 0)
    return moat_error_set (err, errno, "%s", what);
  if (!type_allowed (st.st_mode, types))
    {
      cleanup_free char *want = types_text (types);
      return moat_error_set (err, 0, "%s: %s; %s", what,
                             hostpath_type_text (st.st_mode), want);
    }
  if ((flags & O_NONBLOCK) == 0 && !S_ISDIR (st.st_mode)
      && fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) & ~O_NONBLOCK) < 0)
    return moat_error_set (err, errno, "%s", what);
  *ret_fd = steal_fd (&fd);
  return 0;
}
