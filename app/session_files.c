/* moat session put and get: files and directories in and out of a live
 * session. One side reads a tree and writes it to a pipe as a small stream
 * (a header per entry: directory, end of directory, regular file with its
 * bytes); the other side makes it. Inside the session that side is a child
 * of moat in the container's user and mount namespaces, as the container's
 * root: what it makes belongs to the container's root, what it reads is
 * what the container's root may read, and every path it is given resolves
 * beneath the container's root (RESOLVE_IN_ROOT). Outside it is moat, as
 * the caller. Symlinks and special files are never followed nor copied:
 * each is told on stderr and skipped; names from the stream are checked to
 * be one plain component. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../runtime/container_internal.h"
#include "../runtime/init/linux.h"
#include "session_internal.h"
#include "../lib/util.h"

#define TREE_MAX_DEPTH 64

struct entry_header
{
  char type; /* 'D' directory, 'E' its end, 'F' regular file */
  uint32_t mode;
  uint32_t name_len;
  uint64_t size;
};

static int
read_full (int fd, void *buf, size_t len)
{
  char *p = buf;
  while (len > 0)
    {
      ssize_t n = TEMP_FAILURE_RETRY (read (fd, p, len));
      if (n <= 0)
        return n == 0 ? -EPIPE : -errno;
      p += n;
      len -= (size_t)n;
    }
  return 0;
}

static int
send_header (int out, char type, mode_t mode, const char *name, uint64_t size)
{
  struct entry_header h = { .type = type,
                            .mode = (uint32_t)(mode & 0777),
                            .name_len = (uint32_t)strlen (name),
                            .size = size };
  if (write_all (out, &h, sizeof (h)) < 0
      || write_all (out, name, h.name_len) < 0)
    return -errno;
  return 0;
}

static int send_tree (int out, int fd, const char *name, const char *verb,
                      int depth);

static int
send_dir (int out, int fd, const char *name, mode_t mode, const char *verb,
          int depth)
{
  DIR *d;
  struct dirent *de;
  int r = send_header (out, 'D', mode, name, 0);

  d = r == 0 ? fdopendir (dup (fd)) : NULL;
  if (r == 0 && d == NULL)
    r = -errno;
  while (r == 0 && (de = readdir (d)))
    {
      cleanup_close int sub = -1;
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      sub = openat (fd, de->d_name,
                    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (sub < 0)
        {
          fprintf (stderr, "moat: %s: skipped %s/%s: %s\n", verb, name,
                   de->d_name, errno == ELOOP ? "a symlink" : strerror (errno));
          continue;
        }
      r = send_tree (out, sub, de->d_name, verb, depth + 1);
    }
  if (d)
    closedir (d);
  return r == 0 ? send_header (out, 'E', 0, "", 0) : r;
}

/* fd: opened O_NOFOLLOW by the caller (or the top, as asked). */
static int
send_tree (int out, int fd, const char *name, const char *verb, int depth)
{
  struct stat st;
  char buf[65536];
  uint64_t left;

  if (fstat (fd, &st) < 0)
    return -errno;
  if (depth > TREE_MAX_DEPTH)
    return -ELOOP;
  if (S_ISDIR (st.st_mode))
    return send_dir (out, fd, name, st.st_mode, verb, depth);
  if (!S_ISREG (st.st_mode))
    {
      fprintf (stderr, "moat: %s: skipped %s: not a regular file\n", verb,
               name);
      return 0;
    }
  if (send_header (out, 'F', st.st_mode, name, (uint64_t)st.st_size) < 0)
    return -errno;
  /* Exactly the size announced: zeros if the file shrank meanwhile. */
  for (left = (uint64_t)st.st_size; left > 0;)
    {
      size_t want = left < sizeof (buf) ? left : sizeof (buf);
      ssize_t n = TEMP_FAILURE_RETRY (read (fd, buf, want));
      if (n < 0)
        return -errno;
      if (n == 0)
        {
          memset (buf, 0, want);
          n = (ssize_t)want;
        }
      if (write_all (out, buf, (size_t)n) < 0)
        return -errno;
      left -= (uint64_t)n;
    }
  return 0;
}

static bool
plain_name (const char *s)
{
  return *s && strchr (s, '/') == NULL && strcmp (s, ".") != 0
         && strcmp (s, "..") != 0;
}

static int recv_tree (int in, int dirfd, const char *top, int depth);

static int
recv_file (int in, int dirfd, const char *name, const struct entry_header *h)
{
  cleanup_close int fd = openat (
      dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  char buf[65536];
  uint64_t left = h->size;

  if (fd < 0)
    return -errno;
  while (left > 0)
    {
      size_t want = left < sizeof (buf) ? left : sizeof (buf);
      int r = read_full (in, buf, want);
      if (r < 0)
        return r;
      if (write_all (fd, buf, want) < 0)
        return -errno;
      left -= want;
    }
  return fchmod (fd, h->mode & 0777) < 0 ? -errno : 0;
}

static int
recv_dir (int in, int dirfd, const char *name, const struct entry_header *h,
          int depth)
{
  cleanup_close int fd = -1;
  int r;

  if (mkdirat (dirfd, name, 0700) < 0 && errno != EEXIST)
    return -errno;
  fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  while ((r = recv_tree (in, fd, NULL, depth + 1)) == 0)
    ;
  if (r != 1)
    return r;
  return fchmod (fd, h->mode & 0777) < 0 ? -errno : 0;
}

/* One entry into dirfd, named top (the first) or as the stream says.
 * Returns 1 at the end of a directory. */
static int
recv_tree (int in, int dirfd, const char *top, int depth)
{
  struct entry_header h;
  char name[256];
  int r = read_full (in, &h, sizeof (h));

  if (r < 0)
    return r;
  if (h.name_len >= sizeof (name) || depth > TREE_MAX_DEPTH)
    return -EINVAL;
  r = read_full (in, name, h.name_len);
  if (r < 0)
    return r;
  name[h.name_len] = '\0';
  if (h.type == 'E')
    return 1;
  if (top)
    snprintf (name, sizeof (name), "%s", top);
  if (!plain_name (name))
    return -EINVAL;
  if (h.type == 'D')
    return recv_dir (in, dirfd, name, &h, depth);
  if (h.type == 'F')
    return recv_file (in, dirfd, name, &h);
  return -EINVAL;
}

/* In the container (a child of moat): its user and mount namespaces, as
 * the session's user (--user at create, else root); from here on "/" is
 * the container's root. */
static int
join_container (int userns, int mntns, uid_t uid, gid_t gid)
{
  if (userns >= 0 && setns (userns, CLONE_NEWUSER) < 0)
    return -errno;
  if (setns (mntns, CLONE_NEWNS) < 0)
    return -errno;
  /* No group of the host's: EPERM where the namespace denies setgroups,
   * whose groups then show as nobody inside anyway. */
  (void)setgroups (0, NULL);
  if (setresgid (gid, gid, gid) < 0 || setresuid (uid, uid, uid) < 0)
    return -errno;
  return 0;
}

static int
open_in_root (const char *path, uint64_t flags, int *ret)
{
  struct open_how how = { .flags = flags | O_CLOEXEC,
                          .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
  cleanup_close int root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  long fd;

  if (root < 0)
    return -errno;
  fd = syscall (SYS_openat2, root, path, &how, sizeof (how));
  if (fd < 0)
    return -errno;
  *ret = (int)fd;
  return 0;
}

/* DEST as cp takes it: an existing directory receives NAME; anything else
 * is the path to make. */
static int
open_dest (const char *dest, const char *name, bool in_root, int *ret_dir,
           char **ret_name)
{
  cleanup_free char *copy1 = xstrdup (dest);
  cleanup_free char *copy2 = xstrdup (dest);
  uint64_t dflags = O_RDONLY | O_DIRECTORY;
  int r;

  r = in_root ? open_in_root (dest, dflags, ret_dir)
              : ((*ret_dir = open (dest, (int)dflags | O_CLOEXEC)) < 0 ? -errno
                                                                       : 0);
  if (r == 0)
    {
      *ret_name = xstrdup (name);
      return 0;
    }
  r = in_root
          ? open_in_root (dirname (copy1), dflags, ret_dir)
          : ((*ret_dir = open (dirname (copy1), (int)dflags | O_CLOEXEC)) < 0
                 ? -errno
                 : 0);
  *ret_name = xstrdup (basename (copy2));
  return r;
}

struct transfer
{
  bool put; /* host -> session */
  const char *from, *to;
  int host_fd;     /* put: the source; get: the destination dir */
  char *host_name; /* get: the name to make in host_fd */
  int userns, mntns;
  uid_t uid; /* the session's user, inside */
  gid_t gid;
  const char *verb; /* "session put ID" */
};

static void __attribute__ ((noreturn))
transfer_child (struct transfer *t, int data, int errpipe)
{
  cleanup_close int fd = -1;
  cleanup_free char *name = NULL;
  cleanup_free char *src_copy = xstrdup (t->from);
  const char *what = t->put ? t->to : t->from;
  int r;

  prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  (void)linux_undumpable (NULL);
  r = join_container (t->userns, t->mntns, t->uid, t->gid);
  if (r == 0 && t->put)
    r = open_dest (t->to, basename (src_copy), true, &fd, &name);
  else if (r == 0)
    r = open_in_root (t->from, O_RDONLY | O_NONBLOCK, &fd);
  if (r == 0 && t->put)
    {
      r = recv_tree (data, fd, name, 0);
      what = t->to;
    }
  else if (r == 0)
    r = send_tree (data, fd, t->host_name, t->verb, 0);
  if (r < 0)
    {
      cleanup_free char *msg = xasprintf ("%s: %s", what, strerror (-r));
      write_all (errpipe, msg, strlen (msg));
    }
  _exit (r < 0 ? 1 : 0);
}

static int
transfer_run (struct transfer *t, struct moat_error **err)
{
  int data[2], errp[2];
  char msg[512];
  ssize_t n;
  pid_t pid;
  int status, r;

  if (pipe2 (data, O_CLOEXEC) < 0)
    return moat_fail (err, errno, "pipe");
  if (pipe2 (errp, O_CLOEXEC) < 0)
    {
      close (data[0]);
      close (data[1]);
      return moat_fail (err, errno, "pipe");
    }
  pid = fork ();
  if (pid == 0)
    {
      close (errp[0]);
      close (t->put ? data[1] : data[0]);
      transfer_child (t, t->put ? data[0] : data[1], errp[1]);
    }
  close (errp[1]);
  close (t->put ? data[0] : data[1]);
  if (pid < 0)
    r = -errno;
  else if (t->put)
    r = send_tree (data[1], t->host_fd, t->from, t->verb, 0);
  else
    r = recv_tree (data[0], t->host_fd, t->host_name, 0);
  close (t->put ? data[1] : data[0]);
  n = pid > 0 ? TEMP_FAILURE_RETRY (read (errp[0], msg, sizeof (msg) - 1)) : 0;
  close (errp[0]);
  if (pid > 0
      && (TEMP_FAILURE_RETRY (waitpid (pid, &status, 0)) < 0
          || !WIFEXITED (status) || WEXITSTATUS (status) != 0))
    {
      msg[n > 0 ? n : 0] = '\0';
      return moat_fail (err, 0, "%s", n > 0 ? msg : "the copy failed");
    }
  if (r < 0)
    return moat_fail (err, -r, "%s", t->put ? t->from : t->to);
  return 0;
}

static int
open_namespaces (const struct moat_globals *g, const char *id,
                 struct transfer *t, struct moat_error **err)
{
  cleanup_state struct container_state *st = NULL;
  cleanup_close int dirfd = -1;
  cleanup_free char *user = NULL;
  cleanup_free char *mnt = NULL;
  struct stat mine, theirs;

  if (container_load (g, id, false, NULL, &dirfd, &st, err) < 0)
    return moat_error_wrap (err, "the session's container");
  if (!container_init_alive (st))
    return moat_fail (err, 0, "the session's container is gone");
  user = xasprintf ("/proc/%d/ns/user", st->pid);
  mnt = xasprintf ("/proc/%d/ns/mnt", st->pid);
  t->mntns = open (mnt, O_RDONLY | O_CLOEXEC);
  t->userns = open (user, O_RDONLY | O_CLOEXEC);
  if (t->mntns < 0 || t->userns < 0)
    return moat_fail (err, errno, "the session's namespaces");
  /* Joining one's own user namespace is refused (EINVAL). */
  if (stat ("/proc/self/ns/user", &mine) == 0 && fstat (t->userns, &theirs) == 0
      && mine.st_ino == theirs.st_ino)
    {
      close (t->userns);
      t->userns = -1;
    }
  return 0;
}

static int
session_transfer (const struct moat_globals *g, const char *id,
                  struct transfer *t, struct moat_error **err)
{
  cleanup_close int sdfd = -1;
  cleanup_free char *verb
      = xasprintf ("session %s %s", t->put ? "put" : "get", id);
  struct session_meta m = { 0 };
  int r;

  t->userns = t->mntns = -1;
  t->verb = verb;
  session_reap_one (g, id);
  r = session_open (g, id, &sdfd, err);
  if (r == 0)
    r = session_meta_load (sdfd, &m, err);
  t->uid = (uid_t)m.uid;
  t->gid = (gid_t)m.gid;
  session_meta_clear (&m);
  if (r == 0)
    r = open_namespaces (g, id, t, err);
  if (r == 0)
    {
      session_touch_used (sdfd);
      r = transfer_run (t, err);
    }
  if (t->userns >= 0)
    close (t->userns);
  if (t->mntns >= 0)
    close (t->mntns);
  return r;
}

int
session_put (const struct moat_globals *g, const char *id,
             const char *host_path, const char *dest, struct moat_error **err)
{
  struct transfer t = { .put = true, .from = host_path, .to = dest };
  int r;

  if (dest[0] != '/')
    return moat_fail (err, 0, "%s: the destination must be absolute", dest);
  t.host_fd = open (host_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (t.host_fd < 0)
    return moat_fail (err, errno, "%s", host_path);
  r = session_transfer (g, id, &t, err);
  close (t.host_fd);
  return r;
}

int
session_get (const struct moat_globals *g, const char *id, const char *src,
             const char *host_path, struct moat_error **err)
{
  cleanup_free char *src_copy = xstrdup (src);
  struct transfer t = { .put = false, .from = src, .to = host_path };
  int r;

  if (src[0] != '/')
    return moat_fail (err, 0, "%s: the source must be absolute", src);
  r = open_dest (host_path, basename (src_copy), false, &t.host_fd,
                 &t.host_name);
  if (r < 0)
    return moat_fail (err, -r, "%s", host_path);
  r = session_transfer (g, id, &t, err);
  close (t.host_fd);
  free (t.host_name);
  return r;
}
