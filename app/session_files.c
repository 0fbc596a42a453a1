/* moat session put and get: files and directories in and out of a live
 * session. One side reads a tree and writes it to a pipe as a small stream
 * (a header per entry: directory, end of directory, regular file with its
 * bytes); the other side makes it. Inside the session that side is a child
 * of moat in the container's user and mount namespaces, as the container's
 * root: what it makes belongs to the container's root, what it reads is
 * what the container's root may read, and every path it is given resolves
 * beneath the container's root (RESOLVE_IN_ROOT). Outside it is moat, as
 * the caller, in trees a payload may have written (its workdir): put's
 * source and get's destination are reached through no link at all
 * (lib/hostpath.h), and what get makes has no more than 0755 or 0644, less
 * the caller's umask. Symlinks and special files inside a tree are never
 * followed nor copied (a link made on the host would point wherever the
 * payload chose): each is told on stderr, its name escaped, and skipped;
 * the top of a copy must be a regular file or a directory. Names from the
 * stream are checked to be one plain component. */
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
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../runtime/container_internal.h"
#include "../runtime/init/linux.h"
#include "image.h"
#include "session_internal.h"
#include "../lib/hostpath.h"
#include "../lib/util.h"

#define TREE_MAX_DEPTH 64

struct entry_header
{
  char type; /* 'D' directory, 'E' its end, 'F' regular file */
  uint32_t mode;
  uint32_t name_len;
  uint64_t size;
};

/* What a receiver has made so far, against the copy's limits. Past one,
 * the receiver stops with one of these (below any errno). */
struct copy_budget
{
  const struct session_copy_limits *limits;
  uint64_t entries;
  uint64_t bytes;
  /* On the host (get): the caller's umask, and modes clamped. */
  bool on_host;
  mode_t umask;
};
#define COPY_OVER_ENTRIES (-100000)
#define COPY_OVER_BYTES (-100001)
/* The top of a copy is neither a regular file nor a directory. */
#define COPY_NOT_COPYABLE (-100002)

static char *
copy_error_text (const char *what, int r, const struct session_copy_limits *l)
{
  if (r == COPY_OVER_ENTRIES)
    return xasprintf ("%s: more than %llu entries (--max-entries)", what,
                      (unsigned long long)l->max_entries);
  if (r == COPY_OVER_BYTES)
    return xasprintf ("%s: more than %llu bytes (--max-bytes)", what,
                      (unsigned long long)l->max_bytes);
  if (r == COPY_NOT_COPYABLE)
    return xasprintf ("%s: neither a regular file nor a directory; not copied",
                      what);
  return xasprintf ("%s: %s", what, strerror (-r));
}

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

/* A file's bytes go as extents, each a hole to skip and the data after
 * it, so that a sparse file stays sparse: a payload's 1 TB hole in 64 MiB
 * of scratch must not become 1 TB on the host's disk. */
struct extent_header
{
  uint64_t hole;
  uint64_t len;
};

/* Exactly len bytes from off: zeros where the file shrank meanwhile. */
static int
send_bytes (int out, int fd, uint64_t off, uint64_t len)
{
  char buf[65536];

  while (len > 0)
    {
      size_t want = len < sizeof (buf) ? len : sizeof (buf);
      ssize_t n = TEMP_FAILURE_RETRY (pread (fd, buf, want, (off_t)off));
      if (n < 0)
        return -errno;
      if (n == 0)
        {
          memset (buf, 0, want);
          n = (ssize_t)want;
        }
      if (write_all (out, buf, (size_t)n) < 0)
        return -errno;
      off += (uint64_t)n;
      len -= (uint64_t)n;
    }
  return 0;
}

/* The first byte of data at or after off (size where none is); a file
 * system that cannot tell has data everywhere. */
static uint64_t
next_data (int fd, uint64_t off, uint64_t size)
{
  off_t at = lseek (fd, (off_t)off, SEEK_DATA);
  if (at < 0)
    return errno == ENXIO ? size : off;
  return (uint64_t)at < size ? (uint64_t)at : size;
}

static uint64_t
next_hole (int fd, uint64_t off, uint64_t size)
{
  off_t at = lseek (fd, (off_t)off, SEEK_HOLE);
  return at < 0 || (uint64_t)at > size ? size : (uint64_t)at;
}

static int
send_extents (int out, int fd, uint64_t size)
{
  for (uint64_t off = 0; off < size;)
    {
      uint64_t data = next_data (fd, off, size);
      uint64_t end = data < size ? next_hole (fd, data, size) : size;
      struct extent_header x = { .hole = data - off, .len = end - data };
      int r;

      if (write_all (out, &x, sizeof (x)) < 0)
        return -errno;
      if ((r = send_bytes (out, fd, data, x.len)) < 0)
        return r;
      off = end;
    }
  return 0;
}

static int send_tree (int out, int fd, const char *name, const char *verb,
                      int depth);

/* One line on stderr for what a copy leaves out. The name is the
 * payload's (or is in a tree it wrote): escaped, so that it can neither
 * forge a line nor send the caller's terminal an escape sequence. */
static void
skipped (const char *verb, const char *name, const char *why)
{
  cleanup_free char *shown = printable_text (name, 1024);
  fprintf (stderr, "moat: %s: skipped %s: %s\n", verb, shown, why);
}

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
          cleanup_free char *path = xasprintf ("%s/%s", name, de->d_name);
          skipped (verb, path, errno == ELOOP ? "a symlink" : strerror (errno));
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

  if (fstat (fd, &st) < 0)
    return -errno;
  if (depth > TREE_MAX_DEPTH)
    return -ELOOP;
  if (S_ISDIR (st.st_mode))
    return send_dir (out, fd, name, st.st_mode, verb, depth);
  if (!S_ISREG (st.st_mode) && depth == 0)
    return COPY_NOT_COPYABLE;
  if (!S_ISREG (st.st_mode))
    {
      skipped (verb, name, "not a regular file");
      return 0;
    }
  if (send_header (out, 'F', st.st_mode, name, (uint64_t)st.st_size) < 0)
    return -errno;
  return send_extents (out, fd, (uint64_t)st.st_size);
}

static bool
plain_name (const char *s)
{
  return *s && strchr (s, '/') == NULL && strcmp (s, ".") != 0
         && strcmp (s, "..") != 0;
}

static int recv_tree (int in, int dirfd, const char *top, int depth,
                      struct copy_budget *b);

/* The mode of what a copy made. In the session, the sender's permission
 * bits. On the host, what the payload asked for is no more than 0755 for
 * a directory or an executable, 0644 for any other file, less the
 * caller's umask, and the caller keeps reading and writing it: the
 * payload's 0777 directory or 4777 file is no door into the caller's
 * tree. */
static mode_t
received_mode (uint32_t mode, bool dir, const struct copy_budget *b)
{
  mode_t m = (mode_t)mode & 0777;

  if (!b->on_host)
    return m;
  m |= dir ? 0700 : 0600;
  m &= (dir || (m & 0111)) ? 0755 : 0644;
  return m & ~b->umask;
}

/* A regular file only: what is there already may be the payload's fifo
 * (a blocking open would wait for its reader for ever) or device node;
 * such a name is refused as taken (EEXIST). */
static int
recv_file (int in, int dirfd, const char *name, const struct entry_header *h,
           struct copy_budget *b)
{
  cleanup_close int fd
      = openat (dirfd, name,
                O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  char buf[65536];
  uint64_t left = h->size;
  struct stat st;

  if (fd < 0)
    return errno == ENXIO ? -EEXIST : -errno;
  if (fstat (fd, &st) < 0)
    return -errno;
  if (!S_ISREG (st.st_mode))
    return -EEXIST;
  /* A name the payload linked to another file: writing (and chmod) would
   * go to that file, which the copy was never asked to touch. */
  if (st.st_nlink > 1)
    return -EMLINK;
  if (ftruncate (fd, 0) < 0 || fcntl (fd, F_SETFL, 0) < 0)
    return -errno;
  while (left > 0)
    {
      struct extent_header x;
      int r = read_full (in, &x, sizeof (x));
      if (r < 0)
        return r;
      if (x.hole > left || x.len > left - x.hole)
        return -EINVAL;
      if (lseek (fd, (off_t)x.hole, SEEK_CUR) < 0)
        return -errno;
      left -= x.hole + x.len;
      b->bytes += x.len;
      if (b->bytes > b->limits->max_bytes)
        return COPY_OVER_BYTES;
      while (x.len > 0)
        {
          size_t want = x.len < sizeof (buf) ? x.len : sizeof (buf);
          if ((r = read_full (in, buf, want)) < 0)
            return r;
          if (write_all (fd, buf, want) < 0)
            return -errno;
          x.len -= want;
        }
    }
  /* A hole at the end: the size alone. */
  if (ftruncate (fd, (off_t)h->size) < 0)
    return -errno;
  return fchmod (fd, received_mode (h->mode, false, b)) < 0 ? -errno : 0;
}

static int
recv_dir (int in, int dirfd, const char *name, const struct entry_header *h,
          int depth, struct copy_budget *b)
{
  cleanup_close int fd = -1;
  int r;

  if (mkdirat (dirfd, name, 0700) < 0 && errno != EEXIST)
    return -errno;
  fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  while ((r = recv_tree (in, fd, NULL, depth + 1, b)) == 0)
    ;
  if (r != 1)
    return r;
  return fchmod (fd, received_mode (h->mode, true, b)) < 0 ? -errno : 0;
}

/* One entry into dirfd, named top (the first) or as the stream says.
 * Returns 1 at the end of a directory. */
static int
recv_tree (int in, int dirfd, const char *top, int depth, struct copy_budget *b)
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
  if (++b->entries > b->limits->max_entries)
    return COPY_OVER_ENTRIES;
  if (h.type == 'D')
    return recv_dir (in, dirfd, name, &h, depth, b);
  if (h.type == 'F')
    return recv_file (in, dirfd, name, &h, b);
  return -EINVAL;
}

/* The top of a copy: what the copy made of it is removed if it fails
 * (past a limit, the sender gone), unless the name was there before. */
static int
recv_top (int in, int dirfd, const char *name, struct copy_budget *b)
{
  struct stat st;
  bool made
      = fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
  int r = recv_tree (in, dirfd, name, 0, b);

  if (r < 0 && made)
    (void)remove_tree_at (dirfd, name);
  return r;
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

/* The helper runs beside the payload, on what the payload made: it keeps
 * only what a copy needs (reading and writing past file modes, fchmod of
 * what it did not make), never gains more through an execve, and is no
 * helper for anything else. */
static int
narrow_helper (void)
{
  static const cap_value_t keep[]
      = { CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER };
  cap_t c = cap_init ();
  int r = 0;

  if (c == NULL)
    return -errno;
  if (getuid () == 0
      && (cap_set_flag (c, CAP_EFFECTIVE, 3, keep, CAP_SET) < 0
          || cap_set_flag (c, CAP_PERMITTED, 3, keep, CAP_SET) < 0))
    r = -errno;
  for (cap_value_t v = 0; r == 0 && v <= CAP_LAST_CAP; v++)
    if (v != keep[0] && v != keep[1] && v != keep[2]
        && prctl (PR_CAPBSET_DROP, v, 0, 0, 0) < 0 && errno != EINVAL
        && errno != EPERM)
      r = -errno;
  if (r == 0 && cap_set_proc (c) < 0)
    r = -errno;
  cap_free (c);
  if (r == 0 && prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0
      && errno != EINVAL)
    r = -errno;
  if (r == 0 && prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    r = -errno;
  return r;
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

static int
open_dest_dir (const char *path, bool in_root, int *ret)
{
  int fd;

  if (in_root)
    return open_in_root (path, O_RDONLY | O_DIRECTORY, ret);
  /* On the host, in a tree the payload may have written: no link. */
  fd = hostpath_open (path, O_RDONLY | O_DIRECTORY, 0);
  if (fd < 0)
    return fd;
  *ret = fd;
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
  int r = open_dest_dir (dest, in_root, ret_dir);

  if (r == 0)
    {
      *ret_name = xstrdup (name);
      return 0;
    }
  /* A link at or above DEST is not a name to make. */
  if (r == -ELOOP)
    return r;
  r = open_dest_dir (dirname (copy1), in_root, ret_dir);
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
  const struct session_copy_limits *limits;
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
  if (r == 0)
    r = narrow_helper ();
  if (r == 0 && t->put)
    r = open_dest (t->to, basename (src_copy), true, &fd, &name);
  else if (r == 0)
    r = open_in_root (t->from, O_RDONLY | O_NONBLOCK, &fd);
  if (r == 0 && t->put)
    {
      struct copy_budget b = { .limits = t->limits };
      r = recv_top (data, fd, name, &b);
      what = t->to;
    }
  else if (r == 0)
    r = send_tree (data, fd, t->host_name, t->verb, 0);
  if (r < 0)
    {
      cleanup_free char *msg = copy_error_text (what, r, t->limits);
      write_all (errpipe, msg, strlen (msg));
    }
  _exit (r < 0 ? 1 : 0);
}

static int
transfer_run (struct transfer *t, struct moat_error **err)
{
  struct sigaction old_pipe;
  int data[2], errp[2];
  char msg[512];
  ssize_t n;
  pid_t pid;
  int status, r;

  /* A child that fails early (a read-only destination) closes its end
   * while moat still writes: an EPIPE, then its message, not a SIGPIPE
   * that ends moat without a word. */
  signal (SIGPIPE, SIG_IGN);
  if (pipe2 (data, O_CLOEXEC) < 0)
    return moat_fail (err, errno, "pipe");
  if (pipe2 (errp, O_CLOEXEC) < 0)
    {
      close (data[0]);
      close (data[1]);
      return moat_fail (err, errno, "pipe");
    }
  /* A side that stops early (the destination refused) closes its end:
   * the other gets EPIPE, not a signal, and the child's error is told. */
  sigaction (SIGPIPE, &(struct sigaction){ .sa_handler = SIG_IGN }, &old_pipe);
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
    {
      mode_t mask = umask (0);
      struct copy_budget b
          = { .limits = t->limits, .on_host = true, .umask = mask };
      umask (mask);
      r = recv_top (data[0], t->host_fd, t->host_name, &b);
    }
  close (t->put ? data[1] : data[0]);
  n = pid > 0 ? TEMP_FAILURE_RETRY (read (errp[0], msg, sizeof (msg) - 1)) : 0;
  close (errp[0]);
  sigaction (SIGPIPE, &old_pipe, NULL);
  if (pid > 0 && TEMP_FAILURE_RETRY (waitpid (pid, &status, 0)) < 0)
    status = -1;
  /* Told first: the sender's broken pipe is its consequence. */
  if (r == COPY_OVER_ENTRIES || r == COPY_OVER_BYTES)
    {
      cleanup_free char *text = copy_error_text (t->from, r, t->limits);
      return moat_fail (err, 0, "%s", text);
    }
  if (pid > 0 && (!WIFEXITED (status) || WEXITSTATUS (status) != 0))
    {
      msg[n > 0 ? n : 0] = '\0';
      return moat_fail (err, 0, "%s", n > 0 ? msg : "the copy failed");
    }
  if (r < 0)
    return moat_fail (err, 0, "%s: %s", t->put ? t->from : t->to,
                      hostpath_error_text (r));
  return 0;
}

static int
open_namespaces (const struct moat_globals *g, const char *id,
                 struct transfer *t, struct moat_error **err)
{
  static const char *const files[] = { "ns/mnt", "ns/user" };
  cleanup_state struct container_state *st = NULL;
  cleanup_close int dirfd = -1;
  struct stat mine, theirs;
  int fds[2], r;

  if (container_load (g, id, false, NULL, &dirfd, &st, err) < 0)
    return moat_error_wrap (err, "the session's container");
  /* The init's, not those of a process its pid went to after it (the
   * files would go into that stranger's mounts). */
  r = container_init_proc_open (st, files, 2, fds);
  if (r == -ESRCH)
    return moat_fail (err, 0, "the session's container is gone");
  if (r < 0)
    return moat_fail (err, -r, "the session's namespaces");
  t->mntns = fds[0];
  t->userns = fds[1];
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
             const char *host_path, const char *dest,
             const struct session_copy_limits *limits, struct moat_error **err)
{
  struct transfer t
      = { .put = true, .from = host_path, .to = dest, .limits = limits };
  int r;

  if (dest[0] != '/')
    return moat_fail (err, 0, "%s: the destination must be absolute", dest);
  /* What is in the tree is opened O_NOFOLLOW entry by entry (send_dir). */
  if (hostpath_open_typed (host_path, O_RDONLY, 0, HOSTPATH_REG | HOSTPATH_DIR,
                           host_path, &t.host_fd, err)
      < 0)
    return -1;
  r = session_transfer (g, id, &t, err);
  close (t.host_fd);
  return r;
}

int
session_get (const struct moat_globals *g, const char *id, const char *src,
             const char *host_path, const struct session_copy_limits *limits,
             struct moat_error **err)
{
  cleanup_free char *src_copy = xstrdup (src);
  struct transfer t
      = { .put = false, .from = src, .to = host_path, .limits = limits };
  int r;

  if (src[0] != '/')
    return moat_fail (err, 0, "%s: the source must be absolute", src);
  r = open_dest (host_path, basename (src_copy), false, &t.host_fd,
                 &t.host_name);
  if (r < 0)
    return moat_fail (err, 0, "%s: %s", host_path, hostpath_error_text (r));
  r = session_transfer (g, id, &t, err);
  close (t.host_fd);
  free (t.host_name);
  return r;
}
