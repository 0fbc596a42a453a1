#include "util.h"

#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void __attribute__ ((noreturn)) oom (void)
{
  static const char msg[] = "moat: out of memory\n";
  ssize_t r = write (2, msg, sizeof (msg) - 1);
  (void)r;
  _exit (1);
}

void *
xmalloc (size_t n)
{
  void *p = malloc (n ? n : 1);
  if (p == NULL)
    oom ();
  return p;
}

void *
xcalloc (size_t n, size_t m)
{
  void *p = calloc (n ? n : 1, m ? m : 1);
  if (p == NULL)
    oom ();
  return p;
}

void *
xrealloc (void *p, size_t n)
{
  p = realloc (p, n ? n : 1);
  if (p == NULL)
    oom ();
  return p;
}

char *
xstrdup (const char *s)
{
  char *p;
  if (s == NULL)
    return NULL;
  p = strdup (s);
  if (p == NULL)
    oom ();
  return p;
}

char *
xasprintf (const char *fmt, ...)
{
  va_list ap;
  char *p;
  int r;
  va_start (ap, fmt);
  r = vasprintf (&p, fmt, ap);
  va_end (ap);
  if (r < 0)
    oom ();
  return p;
}

size_t
strv_len (char *const *v)
{
  size_t n = 0;
  while (v && v[n])
    n++;
  return n;
}

void
strv_free (char **v)
{
  for (size_t i = 0; v && v[i]; i++)
    free (v[i]);
  free (v);
}

void
cleanup_strvp (char ***v)
{
  strv_free (*v);
}

char **
strv_dup (char *const *v)
{
  size_t n = strv_len (v);
  char **r = xcalloc (n + 1, sizeof (char *));
  for (size_t i = 0; i < n; i++)
    r[i] = xstrdup (v[i]);
  return r;
}

void
strv_append (char ***v, const char *s)
{
  size_t n = strv_len (*v);
  *v = xrealloc (*v, (n + 2) * sizeof (char *));
  (*v)[n] = xstrdup (s);
  (*v)[n + 1] = NULL;
}

int
parse_int64 (const char *s, int64_t *ret)
{
  char *end;
  long long v;
  if (s == NULL || *s == '\0')
    return -EINVAL;
  errno = 0;
  v = strtoll (s, &end, 10);
  if (errno == ERANGE)
    return -ERANGE;
  if (*end != '\0' || end == s)
    return -EINVAL;
  *ret = v;
  return 0;
}

int
parse_uint64 (const char *s, uint64_t *ret)
{
  char *end;
  unsigned long long v;
  if (s == NULL || *s == '\0' || *s == '-' || *s == '+' || *s == ' ')
    return -EINVAL;
  errno = 0;
  v = strtoull (s, &end, 10);
  if (errno == ERANGE)
    return -ERANGE;
  if (*end != '\0' || end == s)
    return -EINVAL;
  *ret = v;
  return 0;
}

int
parse_int (const char *s, int *ret)
{
  int64_t v;
  int r = parse_int64 (s, &v);
  if (r < 0)
    return r;
  if (v < INT_MIN || v > INT_MAX)
    return -ERANGE;
  *ret = (int)v;
  return 0;
}

int
read_file_at (int dirfd, const char *path, size_t max, char **ret,
              size_t *ret_len)
{
  cleanup_close int fd = openat (dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

  if (fd < 0)
    return -errno;
  return read_fd_all (fd, max, ret, ret_len);
}

int
read_fd_all (int fd, size_t max, char **ret, size_t *ret_len)
{
  cleanup_free char *buf = NULL;
  size_t len = 0, cap = 0;

  for (;;)
    {
      ssize_t r;
      if (cap - len < 4096)
        {
          cap = cap ? cap * 2 : 8192;
          if (cap > max + 4096)
            cap = max + 4096;
          buf = xrealloc (buf, cap + 1);
        }
      r = read (fd, buf + len, cap - len);
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          return -errno;
        }
      if (r == 0)
        break;
      len += r;
      if (len > max)
        return -EFBIG;
    }
  if (buf == NULL)
    buf = xmalloc (1);
  buf[len] = '\0';
  *ret = steal_pointer (&buf);
  if (ret_len)
    *ret_len = len;
  return 0;
}

int
write_all (int fd, const void *buf, size_t len)
{
  const char *p = buf;
  while (len > 0)
    {
      ssize_t r = write (fd, p, len);
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          return -errno;
        }
      p += r;
      len -= r;
    }
  return 0;
}

int
pread_all (int fd, void *buf, size_t len, off_t at)
{
  size_t done = 0;

  while (done < len)
    {
      ssize_t r = pread (fd, (char *)buf + done, len - done, at + (off_t)done);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return -errno;
      if (r == 0)
        return -ENODATA;
      done += (size_t)r;
    }
  return 0;
}

int
write_file_at (int dirfd, const char *path, const char *s)
{
  cleanup_close int fd = openat (dirfd, path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return -errno;
  return write_all (fd, s, strlen (s));
}

int
write_pid_file (const char *path, pid_t pid, struct moat_error **err)
{
  cleanup_free char *dir = NULL;
  cleanup_close int dfd = -1;
  const char *base = strrchr (path, '/');
  char buf[32];
  int r;

  dir = base ? xasprintf ("%.*s", (int)(base - path), path) : xstrdup (".");
  base = base ? base + 1 : path;
  dfd = open (*dir ? dir : "/", O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return moat_fail (err, errno, "pid file %s", path);
  snprintf (buf, sizeof (buf), "%d", pid);
  r = write_file_atomic (dfd, base, buf, strlen (buf), 0644);
  if (r < 0)
    return moat_fail (err, -r, "pid file %s", path);
  return 0;
}

int
timespec_cmp (const struct timespec *a, const struct timespec *b)
{
  if (a->tv_sec != b->tv_sec)
    return a->tv_sec < b->tv_sec ? -1 : 1;
  return (a->tv_nsec > b->tv_nsec) - (a->tv_nsec < b->tv_nsec);
}

/* Not gmtime_r and strftime: glibc's gmtime_r loads the time zone
 * (tzset reads /etc/localtime: 7 syscalls per verb) for a UTC time that
 * needs none. Days to a civil date as in Howard Hinnant's date algorithms
 * (public domain), for the proleptic Gregorian calendar. */
void
format_rfc3339 (const struct timespec *ts, char *buf, size_t len)
{
  int64_t secs = ts->tv_sec;
  int64_t days = secs / 86400, rem = secs % 86400;
  if (rem < 0)
    {
      rem += 86400;
      days--;
    }
  int64_t z = days + 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int64_t day = doy - (153 * mp + 2) / 5 + 1;
  int64_t month = mp < 10 ? mp + 3 : mp - 9;
  int64_t year = yoe + era * 400 + (month <= 2);

  snprintf (buf, len,
            "%04" PRId64 "-%02" PRId64 "-%02" PRId64 "T%02d:%02d:%02d.%09ldZ",
            year, month, day, (int)(rem / 3600), (int)(rem / 60 % 60),
            (int)(rem % 60), (long)ts->tv_nsec);
}

void
now_rfc3339 (char *buf, size_t len)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  format_rfc3339 (&ts, buf, len);
}

int
mkdir_p (const char *path, mode_t mode)
{
  cleanup_free char *p = xstrdup (path);
  for (char *s = p + 1; *s; s++)
    {
      if (*s != '/')
        continue;
      *s = '\0';
      if (mkdir (p, mode) < 0 && errno != EEXIST)
        return -errno;
      *s = '/';
    }
  if (mkdir (p, mode) < 0 && errno != EEXIST)
    return -errno;
  return 0;
}

/* mountinfo escapes space, tab, newline and backslash as \\ooo: undo
 * that in place. */
void
mountinfo_unescape (char *s)
{
  char *o = s;
  for (; *s; s++)
    {
      if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0'
          && s[2] <= '7' && s[3] >= '0' && s[3] <= '7')
        {
          *o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
          s += 3;
        }
      else
        *o++ = *s;
    }
  *o = '\0';
}

int
mountinfo_split (char *line, struct mountinfo_entry *ret)
{
  char *save = NULL, *tok, *sep = strstr (line, " - ");
  int field = 0;

  *ret = (struct mountinfo_entry){ 0 };
  if (sep == NULL)
    return -1;
  *sep = '\0';
  /* id parent major:minor root mount-point options ... */
  for (tok = strtok_r (line, " ", &save); tok && field < 6;
       tok = strtok_r (NULL, " ", &save))
    {
      char **slot[]
          = { NULL, NULL, NULL, NULL, &ret->mount_point, &ret->options };
      if (field == 0)
        ret->id = strtoull (tok, NULL, 10);
      else if (slot[field])
        *slot[field] = tok;
      field++;
    }
  save = NULL;
  ret->fstype = strtok_r (sep + 3, " \n", &save);
  if (ret->mount_point == NULL || ret->options == NULL || ret->fstype == NULL)
    return -1;
  mountinfo_unescape (ret->mount_point);
  return 0;
}

bool
path_at_or_below (const char *path, const char *dir)
{
  size_t n = strlen (dir);
  return strncmp (path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

int
read_trusted_file_at (int dirfd, const char *path, size_t min_len,
                      size_t max_len, char **ret_buf, size_t *ret_len)
{
  cleanup_close int fd
      = openat (dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  cleanup_free char *buf = NULL;
  struct stat st;
  size_t len;

  if (fd < 0 || fstat (fd, &st) < 0)
    return -1;
  if (!S_ISREG (st.st_mode) || st.st_uid != geteuid ()
      || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return -1;
  len = (size_t)st.st_size;
  if (len < min_len || len > max_len)
    return -1;
  buf = xmalloc (len);
  if (pread_all (fd, buf, len, 0) < 0)
    return -1;
  *ret_buf = steal_pointer (&buf);
  *ret_len = len;
  return 0;
}

const char *
kernel_identity (void)
{
  static char id[2 * sizeof (((struct utsname *)0)->release) + 2];
  struct utsname u;

  if (id[0] == '\0' && uname (&u) == 0)
    snprintf (id, sizeof (id), "%s %s", u.release, u.version);
  return id;
}

char *
strv_join (char *const *v, const char *sep)
{
  size_t len = 1, seplen = strlen (sep);
  char *out, *o;

  for (size_t i = 0; v && v[i]; i++)
    len += strlen (v[i]) + seplen;
  out = o = xmalloc (len);
  *o = '\0';
  for (size_t i = 0; v && v[i]; i++)
    {
      if (i > 0)
        o = stpcpy (o, sep);
      o = stpcpy (o, v[i]);
    }
  return out;
}

int
parse_byte_size (const char *s, uint64_t *ret)
{
  static const struct
  {
    const char *suffix;
    unsigned shift;
  } units[] = {
    { "", 0 },     { "b", 0 },   { "k", 10 },   { "kb", 10 },  { "kib", 10 },
    { "m", 20 },   { "mb", 20 }, { "mib", 20 }, { "g", 30 },   { "gb", 30 },
    { "gib", 30 }, { "t", 40 },  { "tb", 40 },  { "tib", 40 },
  };
  uint64_t v = 0;
  const char *p = s;

  if (s == NULL || *s < '0' || *s > '9')
    return -EINVAL;
  for (; *p >= '0' && *p <= '9'; p++)
    {
      if (v > (UINT64_MAX - (*p - '0')) / 10)
        return -ERANGE;
      v = v * 10 + (*p - '0');
    }
  for (size_t i = 0; i < sizeof (units) / sizeof (units[0]); i++)
    if (strcasecmp (p, units[i].suffix) == 0)
      {
        if (units[i].shift && v > (UINT64_MAX >> units[i].shift))
          return -ERANGE;
        *ret = v << units[i].shift;
        return 0;
      }
  return -EINVAL;
}

/* The signals this thread ignores, from the kernel's own SigIgn line (3
 * syscalls where asking for each signal takes 64); every one where /proc
 * cannot tell (a container without a /proc mount). */
static uint64_t
ignored_signals (void)
{
  cleanup_free char *status = NULL;
  cleanup_close int fd
      = open ("/proc/thread-self/status", O_RDONLY | O_CLOEXEC);
  const char *line;
  uint64_t set;
  size_t len;
  char *end;

  if (fd < 0 || read_fd_all (fd, 1 << 16, &status, &len) < 0
      || (line = strstr (status, "\nSigIgn:")) == NULL)
    return UINT64_MAX;
  errno = 0;
  set = strtoull (line + strlen ("\nSigIgn:"), &end, 16);
  return errno == 0 && end != line + strlen ("\nSigIgn:") ? set : UINT64_MAX;
}

void
reset_signal_state (void)
{
  /* The kernel's own struct: glibc's sigaction refuses the two signals it
   * keeps for itself (32, 33), which a caller can still leave ignored. */
  struct
  {
    void (*handler) (int);
    unsigned long flags;
    void (*restorer) (void);
    uint64_t mask;
  } dfl = { .handler = SIG_DFL };
  uint64_t ignored = ignored_signals ();
  uint64_t none = 0;

  for (int sig = 1; sig <= 64; sig++)
    if (ignored & (UINT64_C (1) << (sig - 1)))
      syscall (SYS_rt_sigaction, sig, &dfl, NULL, sizeof (dfl.mask));
  syscall (SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof (none));
}

uint64_t
monotonic_usec (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

char *
printable_text (const char *s, size_t max)
{
  size_t len = strlen (s), n = 0;
  char *out = xmalloc ((len < max ? len : max) * 4 + 4);

  for (size_t i = 0; s[i] && i < max; i++)
    {
      unsigned char c = (unsigned char)s[i];
      if (c < 0x20 || c == 0x7f)
        n += (size_t)sprintf (out + n, "\\x%02x", c);
      else
        out[n++] = (char)c;
    }
  strcpy (out + n, len > max ? "..." : "");
  return out;
}

uint64_t
hash64_words (const void *data, size_t len)
{
  return hash64_words_more (FNV1A64_INIT ^ len, data, len);
}

uint64_t
hash64_words_more (uint64_t h, const void *data, size_t len)
{
  const unsigned char *p = data;
  size_t i = 0;

  for (; i + 8 <= len; i += 8)
    {
      uint64_t w;
      memcpy (&w, p + i, 8);
      h = (h ^ w) * UINT64_C (0x9e3779b97f4a7c15);
      h ^= h >> 29;
    }
  return fnv1a64 (p + i, len - i, h);
}

uint64_t
fnv1a64 (const void *data, size_t len, uint64_t h)
{
  const unsigned char *p = data;

  for (size_t i = 0; i < len; i++)
    h = (h ^ p[i]) * UINT64_C (0x100000001b3);
  return h;
}

struct build_id_search
{
  char *out;
  size_t size;
  bool found;
};

/* The GNU build-id note of the program itself (the first object). */
static int
build_id_of_program (struct dl_phdr_info *info, size_t info_size, void *data)
{
  struct build_id_search *s = data;

  (void)info_size;
  for (size_t i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
      const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
      const char *end = p + ph->p_memsz;

      if (ph->p_type != PT_NOTE)
        continue;
      while (p + sizeof (ElfW (Nhdr)) <= end)
        {
          const ElfW (Nhdr) *n = (const ElfW (Nhdr) *)p;
          const unsigned char *desc = (const unsigned char *)p + sizeof (*n)
                                      + ((n->n_namesz + 3) & ~3u);
          size_t len = 0;

          if ((const char *)desc + n->n_descsz > end)
            break;
          if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4
              && memcmp (p + sizeof (*n), "GNU", 4) == 0)
            {
              for (size_t j = 0; j < n->n_descsz && len + 3 <= s->size; j++)
                len += (size_t)snprintf (s->out + len, s->size - len, "%02x",
                                         desc[j]);
              s->found = len > 0;
              return 1;
            }
          p = (const char *)desc + ((n->n_descsz + 3) & ~3u);
        }
    }
  return 1; /* the program comes first; the libraries do not count */
}

bool
program_build_id (char *out, size_t size)
{
  struct build_id_search s = { .out = out, .size = size };

  if (size == 0)
    return false;
  out[0] = '\0';
  dl_iterate_phdr (build_id_of_program, &s);
  return s.found;
}

#ifndef MOAT_VERSION
#define MOAT_VERSION "unknown"
#endif
#ifndef MOAT_COMMIT
#define MOAT_COMMIT "unknown"
#endif

const char *
program_identity (void)
{
  static char identity[64];
  char id[41];

  if (identity[0] != '\0')
    return identity;
  if (program_build_id (id, sizeof (id)))
    snprintf (identity, sizeof (identity), "moat %s", id);
  else
    snprintf (identity, sizeof (identity), "moat %s %s", MOAT_VERSION,
              MOAT_COMMIT);
  return identity;
}

void
close_fd_array (int *fds, size_t n)
{
  for (size_t i = 0; fds && i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  free (fds);
}
