/* config.json's seccomp filter, compiled once per distinct filter: Docker's
 * and podman's default profiles (~350 syscall names) cost libseccomp about
 * 11 ms of CPU at every create, more than all the rest of it.
 *
 * A pod author writes that filter, so the cache is keyed by its whole
 * description, compared byte for byte on every hit: a crafted collision of
 * the file name's hash can neither hand one container's program to another
 * nor plant a weaker one under a stricter filter's name. The file must be
 * ours and writable by nobody else, as the built-in filter's cache. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/filter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "seccomp_internal.h"
#include "../../lib/util.h"

#define CONFIG_CACHE_MAGIC "MOATSCF1"

struct config_cache_header
{
  char magic[8];
  uint64_t desc_len; /* the description follows the header */
  uint64_t n_insns;  /* then the program */
  uint64_t checksum; /* of description and program */
  uint32_t flags;    /* SECCOMP_FILTER_FLAG_* of the filter */
  uint32_t pad;
};

void
seccomp_cache_write (const char *dir, const char *path, const char *buf,
                     size_t len)
{
  if (mkdir_p (dir, 0700) < 0)
    return;
  (void)write_file_atomic (AT_FDCWD, path, buf, len, 0600);
}

/* Strings go in with their length, so that no two filters describe alike. */
static void
put_str (FILE *f, const char *tag, const char *s)
{
  if (s)
    fprintf (f, "%s %zu:%s\n", tag, strlen (s), s);
  else
    fprintf (f, "%s -\n", tag);
}

static void
put_strv (FILE *f, const char *tag, char *const *v)
{
  size_t n = 0;
  while (v && v[n])
    n++;
  fprintf (f, "%s %zu\n", tag, n);
  for (size_t i = 0; i < n; i++)
    put_str (f, " ", v[i]);
}

/* Everything the program depends on: the filter, and what compiles it
 * (this moat build, by its build-id: a patched tree or a tarball's build
 * can share a version and commit; libseccomp's version, the kernel it picks
 * actions for, the native architecture). */
static char *
describe (const struct spec_seccomp *s, size_t *ret_len)
{
  const struct scmp_version *v = seccomp_version ();
  char *text = NULL;
  FILE *f = open_memstream (&text, ret_len);

  if (f == NULL)
    return NULL;
  fprintf (f, "%s libseccomp %u.%u.%u kernel %s arch %u\n", program_identity (),
           v->major, v->minor, v->micro, kernel_identity (),
           seccomp_arch_native ());
  put_str (f, "default", s->default_action);
  fprintf (f, "errno %d %" PRIu32 "\n", s->has_default_errno_ret,
           s->default_errno_ret);
  put_strv (f, "arch", s->architectures);
  put_strv (f, "flags", s->flags);
  put_str (f, "listener", s->listener_path);
  fprintf (f, "rules %zu\n", s->n_syscalls);
  for (size_t i = 0; i < s->n_syscalls; i++)
    {
      const struct spec_seccomp_rule *r = &s->syscalls[i];
      put_strv (f, "names", r->names);
      put_str (f, "action", r->action);
      fprintf (f, "errno %d %" PRIu32 " args %zu\n", r->has_errno_ret,
               r->errno_ret, r->n_args);
      for (size_t a = 0; a < r->n_args; a++)
        {
          fprintf (f, "arg %" PRIu32 " %" PRIu64 " %" PRIu64 "\n",
                   r->args[a].index, r->args[a].value, r->args[a].value_two);
          put_str (f, "op", r->args[a].op);
        }
    }
  if (fclose (f) != 0)
    {
      free (text);
      return NULL;
    }
  return text;
}

static int
cache_load (const char *path, const char *desc, size_t desc_len,
            struct seccomp_prog *ret)
{
  cleanup_free char *buf = NULL;
  struct config_cache_header h;
  size_t len, insns_len;

  if (read_trusted_file_at (AT_FDCWD, path, sizeof (h) + desc_len + 1,
                            sizeof (h) + desc_len
                                + BPF_MAXINSNS * sizeof (struct sock_filter),
                            &buf, &len)
      < 0)
    return -1;
  memcpy (&h, buf, sizeof (h));
  insns_len = len - sizeof (h) - desc_len;
  if (memcmp (h.magic, CONFIG_CACHE_MAGIC, sizeof (h.magic)) != 0
      || h.desc_len != desc_len
      || memcmp (buf + sizeof (h), desc, desc_len) != 0
      || insns_len % sizeof (struct sock_filter) != 0
      || h.n_insns != insns_len / sizeof (struct sock_filter)
      || h.checksum
             != fnv1a64 (buf + sizeof (h), len - sizeof (h), FNV1A64_INIT))
    return -1;
  memmove (buf, buf + sizeof (h) + desc_len, insns_len);
  ret->insns = steal_pointer (&buf);
  ret->n_insns = (size_t)h.n_insns;
  ret->flags = h.flags;
  return 0;
}

/* config.json's filter is the pod author's to vary: without a bound each
 * distinct one left a file in ROOT/.cache (a tmpfs: memory) until reboot.
 * At most CONFIG_CACHE_MAX files; the oldest written go first. Run only on
 * a miss, after libseccomp compiled, which costs far more than the scan. */
#define CONFIG_CACHE_MAX 64
#define CONFIG_CACHE_PREFIX "seccomp-config-"

struct cached_file
{
  char *name;
  struct timespec written;
};

static int
by_age (const void *a, const void *b)
{
  return timespec_cmp (&((const struct cached_file *)a)->written,
                       &((const struct cached_file *)b)->written);
}

/* Make room for one more file: remove the oldest beyond CONFIG_CACHE_MAX
 * less one. */
static void
config_cache_prune (const char *dir)
{
  int dfd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR *d = dfd < 0 ? NULL : fdopendir (dfd);
  struct cached_file *files = NULL;
  size_t n = 0, cap = 0;
  struct dirent *de;

  if (d == NULL)
    {
      if (dfd >= 0)
        close (dfd);
      return;
    }
  while ((de = readdir (d)))
    {
      struct stat st;
      if (strncmp (de->d_name, CONFIG_CACHE_PREFIX,
                   strlen (CONFIG_CACHE_PREFIX))
              != 0
          || fstatat (dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      if (n == cap)
        files = xrealloc (files, (cap = cap ? 2 * cap : 64) * sizeof (*files));
      files[n++] = (struct cached_file){ xstrdup (de->d_name), st.st_mtim };
    }
  if (n >= CONFIG_CACHE_MAX)
    qsort (files, n, sizeof (*files), by_age);
  for (size_t i = 0; i < n; i++)
    {
      if (n - i >= CONFIG_CACHE_MAX)
        unlinkat (dfd, files[i].name, 0);
      free (files[i].name);
    }
  free (files);
  closedir (d);
}

static void
cache_store (const char *dir, const char *path, const char *desc,
             size_t desc_len, const struct seccomp_prog *p)
{
  size_t insns_len = p->n_insns * sizeof (struct sock_filter);
  size_t len = sizeof (struct config_cache_header) + desc_len + insns_len;
  cleanup_free char *buf = xmalloc (len);
  struct config_cache_header h
      = { .desc_len = desc_len, .n_insns = p->n_insns, .flags = p->flags };

  memcpy (h.magic, CONFIG_CACHE_MAGIC, sizeof (h.magic));
  memcpy (buf + sizeof (h), desc, desc_len);
  memcpy (buf + sizeof (h) + desc_len, p->insns, insns_len);
  h.checksum = fnv1a64 (buf + sizeof (h), desc_len + insns_len, FNV1A64_INIT);
  memcpy (buf, &h, sizeof (h));
  seccomp_cache_write (dir, path, buf, len);
}

int
seccomp_compile_config_cached (const struct spec_seccomp *s,
                               const char *cache_dir, struct seccomp_prog *ret,
                               struct moat_error **err)
{
  cleanup_free char *desc = NULL;
  cleanup_free char *path = NULL;
  struct seccomp_prog prog = { 0 };
  size_t desc_len = 0;
  int r;

  if (!s->present || cache_dir == NULL
      || (desc = describe (s, &desc_len)) == NULL)
    return seccomp_compile_config (s, ret, err);
  path = xasprintf ("%s/" CONFIG_CACHE_PREFIX "%016" PRIx64 ".bpf", cache_dir,
                    fnv1a64 (desc, desc_len, FNV1A64_INIT));
  if (cache_load (path, desc, desc_len, &prog) == 0)
    {
      *ret = prog;
      return 0;
    }
  r = seccomp_compile_config (s, &prog, err);
  if (r < 0)
    return r;
  if (prog.n_insns > 0)
    {
      config_cache_prune (cache_dir);
      cache_store (cache_dir, path, desc, desc_len, &prog);
    }
  *ret = prog;
  return 0;
}
