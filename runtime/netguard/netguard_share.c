/* The network guard's programs and lists, shared between containers.
 *
 * The programs and their list maps depend only on the rules (the mode, the
 * lists, the nameservers) and on this build's code. So the first container
 * with a given set of rules builds them (the verifier runs, the tries are
 * filled) and pins them in a BPF filesystem, under PIN_DIR/<hash of the
 * rules>/; every later one opens the pins (BPF_OBJ_GET) and only attaches
 * them to its cgroup. The counters stay per container: they live in a
 * cgroup storage map, one value per cgroup the programs are attached to
 * (netguard_bpf.h).
 *
 * - A 64-bit hash names the entry: of the description's head (modes,
 *   code, sizes) and of each list's digest (the policy's, taken once for
 *   the audit line; cidr_list_digest); the entry holds the whole
 *   description (a map "desc"), compared byte for byte before use, a
 *   piece at a time against the lists where they are: a nameserver comes
 *   from the container's resolv.conf, which a pod author controls, so a
 *   collision must give nothing away (it gets a copy of its own instead).
 * - Building is under an flock on PIN_DIR, in PIN_DIR/build-PID, renamed
 *   to the entry's name when complete: a create killed half way leaves a
 *   build-* directory that the next builder removes; a reader never sees
 *   a half-built entry.
 * - At most NETGUARD_SHARE_MAX entries: the builder removes the oldest
 *   first. Unpinning is safe while containers use an entry: their
 *   attachments hold the programs, and the programs their maps.
 * - Where nothing can be pinned (no BPF filesystem and none can be
 *   mounted, a read-only /sys), each container loads its own copy, as
 *   before sharing: the same guard, at the verifier's cost per create. */
#include "netguard_share.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "../bpf/bpf.h"
#include "../../lib/util.h"

/* What a pin of each program is called in an entry. */
static const char *const pin_names[NETGUARD_N_PROGS] = {
  [NETGUARD_PROG_SKB_LOOPBACK] = "skb_lo",
  [NETGUARD_PROG_SKB_EGRESS] = "skb_out",
  [NETGUARD_PROG_SKB_INGRESS] = "skb_in",
  [NETGUARD_PROG_CONNECT4] = "connect4",
  [NETGUARD_PROG_CONNECT6] = "connect6",
  [NETGUARD_PROG_SENDMSG4] = "sendmsg4",
  [NETGUARD_PROG_SENDMSG6] = "sendmsg6",
};
#define DESC_PIN "desc"
#define COUNTS_PIN "counts"
/* bpffs refuses names with a dot. */
#define BUILD_PREFIX "build-"

bool
netguard_prog_used (const struct netguard_rules *r, enum netguard_prog kind)
{
  switch (kind)
    {
    case NETGUARD_PROG_SKB_LOOPBACK:
      return !r->egress;
    case NETGUARD_PROG_SKB_EGRESS:
    case NETGUARD_PROG_SKB_INGRESS:
      return r->egress;
    default:
      return true;
    }
}

void
netguard_progs_close (struct netguard_progs *p)
{
  for (int i = 0; i < NETGUARD_N_PROGS; i++)
    if (p->fd[i] >= 0)
      {
        close (p->fd[i]);
        p->fd[i] = -1;
      }
  if (p->counts >= 0)
    close (p->counts);
  p->counts = -1;
}

static void
progs_init (struct netguard_progs *p)
{
  for (int i = 0; i < NETGUARD_N_PROGS; i++)
    p->fd[i] = -1;
  p->counts = -1;
}

/* Maps and programs of this container's own. */
static int
build_own (const struct netguard_rules *r, struct netguard_progs *ret,
           struct moat_error **err)
{
  __attribute__ ((cleanup (netguard_maps_close))) struct netguard_maps maps
      = { -1, -1, -1, -1, -1, -1 };
  __attribute__ ((cleanup (netguard_progs_close))) struct netguard_progs p;

  progs_init (&p);
  if (netguard_maps_create (r, &maps, err) < 0)
    return -1;
  for (int k = 0; k < NETGUARD_N_PROGS; k++)
    if (netguard_prog_used (r, (enum netguard_prog)k)
        && netguard_bpf_load ((enum netguard_prog)k, r, &maps, &p.fd[k], err)
               < 0)
      return -1;
  /* The programs hold the maps from here on. */
  p.counts = maps.counts;
  maps.counts = -1;
  *ret = p;
  progs_init (&p);
  return 0;
}

/* The description: everything the programs and maps are made from. */
struct desc
{
  uint8_t *data;
  size_t n, cap;
};

static void
desc_free (struct desc *d)
{
  free (d->data);
}

static void
desc_add (struct desc *d, const void *data, size_t len)
{
  if (d->n + len > d->cap)
    {
      d->cap = (d->n + len) * 2;
      d->data = xrealloc (d->data, d->cap);
    }
  memcpy (d->data + d->n, data, len);
  d->n += len;
}

static void
desc_list (struct desc *d, const struct cidr *list, size_t n)
{
  uint32_t count = (uint32_t)n;

  desc_add (d, &count, sizeof (count));
  for (size_t i = 0; i < n; i++)
    {
      uint8_t entry[CIDR_PACKED_LEN];
      cidr_pack (&list[i], entry);
      desc_add (d, entry, sizeof (entry));
    }
}

/* The lists in the description's order. */
static void
rules_lists (const struct netguard_rules *r, const struct cidr *lists[4],
             size_t counts[4])
{
  lists[0] = r->deny, counts[0] = r->n_deny;
  lists[1] = r->allow, counts[1] = r->n_allow;
  lists[2] = r->dns, counts[2] = r->n_dns;
  lists[3] = r->private_nets, counts[3] = r->n_private;
}

/* The description's head: what the programs are made from but the lists
 * (the modes, the code, the sizes). */
static int
describe_head (const struct netguard_rules *r, struct desc *d,
               struct moat_error **err)
{
  /* Placeholder map fds: the code is what matters, not this create's fds. */
  static const struct netguard_maps placeholders = { 3, 4, 5, 6, 7, 8 };
  /* -2: entries packed as cidr_pack does (-1: raw family, host-order
   * port), so that an older moat's pins are not taken for ours. */
  static const char magic[16] = "moat-netguard-2";
  /* Only the modes shape the programs (netguard_bpf_build): built from
   * them alone, the lists (checked once by the caller) are not walked
   * again for each program. */
  const struct netguard_rules modes
      = { .egress = r->egress, .allowlist = r->allowlist };
  const uint32_t sizes[]
      = { sizeof (struct netguard_counts), sizeof (struct netguard_lpm_key),
          r->egress, r->allowlist };

  desc_add (d, magic, sizeof (magic));
  desc_add (d, sizes, sizeof (sizes));
  for (int k = 0; k < NETGUARD_N_PROGS; k++)
    {
      cleanup_free struct bpf_insn *insns = NULL;
      uint64_t code = 0;
      size_t n = 0;

      if (netguard_prog_used (r, (enum netguard_prog)k))
        {
          if (netguard_bpf_build ((enum netguard_prog)k, &modes, &placeholders,
                                  &insns, &n, err)
              < 0)
            return -1;
          code = fnv1a64 (insns, n * sizeof (*insns), FNV1A64_INIT);
        }
      desc_add (d, &code, sizeof (code));
    }
  return 0;
}

/* The whole description's size: the head's, then each list's count and
 * entries. */
static size_t
desc_size (const struct netguard_rules *r, const struct desc *head)
{
  const struct cidr *lists[4];
  size_t counts[4], total = head->n;

  rules_lists (r, lists, counts);
  for (int i = 0; i < 4; i++)
    total += sizeof (uint32_t) + CIDR_PACKED_LEN * counts[i];
  return total;
}

/* The whole description (the head, then each list: its count and its
 * entries), for a new entry's pin. */
static void
describe_lists (const struct netguard_rules *r, struct desc *d)
{
  const struct cidr *lists[4];
  size_t counts[4], total = desc_size (r, d);

  rules_lists (r, lists, counts);
  d->data = xrealloc (d->data, total);
  d->cap = total;
  for (int i = 0; i < 4; i++)
    desc_list (d, lists[i], counts[i]);
}

/* The entry's name: the head and the lists, each long one by the digest
 * the policy took of it (cidr_list_digest), the others entry by entry. It
 * only points at the entry, whose description is compared whole. */
static char *
entry_name (const struct netguard_rules *r, const struct desc *head)
{
  const struct cidr *lists[4];
  const char *digests[4] = { r->deny_digest, r->allow_digest, NULL, NULL };
  size_t counts[4];
  uint64_t h = hash64_words (head->data, head->n);

  rules_lists (r, lists, counts);
  for (int i = 0; i < 4; i++)
    {
      char digest[CIDR_LIST_DIGEST_LEN];
      if (digests[i] == NULL || digests[i][0] == '\0')
        {
          cidr_list_digest (lists[i], counts[i], digest);
          digests[i] = digest;
        }
      h = fnv1a64 (digests[i], strlen (digests[i]), h);
      h = fnv1a64 (&counts[i], sizeof (counts[i]), h);
    }
  return xasprintf ("%016" PRIx64, h);
}

/* PINNED (the description an entry holds) is the head then R's lists,
 * compared a piece at a time: ours is never built whole. */
static bool
same_description (const uint8_t *pinned, size_t len,
                  const struct netguard_rules *r, const struct desc *head)
{
  const struct cidr *lists[4];
  size_t counts[4], at = head->n;
  uint8_t piece[256 * CIDR_PACKED_LEN];

  if (len != desc_size (r, head) || memcmp (pinned, head->data, head->n) != 0)
    return false;
  rules_lists (r, lists, counts);
  for (int i = 0; i < 4; i++)
    {
      uint32_t count = (uint32_t)counts[i];
      if (memcmp (pinned + at, &count, sizeof (count)) != 0)
        return false;
      at += sizeof (count);
      for (size_t k = 0; k < counts[i]; k += 256)
        {
          size_t m = counts[i] - k < 256 ? counts[i] - k : 256;
          for (size_t e = 0; e < m; e++)
            cidr_pack (&lists[i][k + e], piece + e * CIDR_PACKED_LEN);
          if (memcmp (pinned + at, piece, m * CIDR_PACKED_LEN) != 0)
            return false;
          at += m * CIDR_PACKED_LEN;
        }
    }
  return true;
}

/* The pinned description at ENTRY/desc is that of R (head its head). */
static int
desc_matches (const char *entry, const struct netguard_rules *r,
              const struct desc *head)
{
  cleanup_free char *path = xasprintf ("%s/" DESC_PIN, entry);
  cleanup_free uint8_t *pinned = NULL;
  cleanup_close int fd = -1;
  uint32_t value_size = 0, zero = 0;
  int rc = bpf_obj_get (path, &fd);

  if (rc < 0)
    return rc;
  rc = bpf_map_value_size (fd, &value_size);
  if (rc < 0)
    return rc;
  if (value_size != desc_size (r, head))
    return -ESTALE;
  pinned = xmalloc (value_size);
  rc = bpf_map_lookup (fd, &zero, pinned);
  if (rc < 0)
    return rc;
  return same_description (pinned, value_size, r, head) ? 0 : -ESTALE;
}

/* Open the programs pinned at ENTRY. -ENOENT: no such entry (or it went
 * meanwhile); -ESTALE: another description under its name. */
static int
open_entry (const char *entry, const struct netguard_rules *r,
            const struct desc *head, struct netguard_progs *ret)
{
  __attribute__ ((cleanup (netguard_progs_close))) struct netguard_progs p;
  int rc = desc_matches (entry, r, head);

  progs_init (&p);
  if (rc < 0)
    return rc;
  for (int k = 0; k < NETGUARD_N_PROGS; k++)
    if (netguard_prog_used (r, (enum netguard_prog)k))
      {
        cleanup_free char *path = xasprintf ("%s/%s", entry, pin_names[k]);
        rc = bpf_obj_get (path, &p.fd[k]);
        if (rc < 0)
          return rc;
      }
  {
    cleanup_free char *path = xasprintf ("%s/" COUNTS_PIN, entry);
    rc = bpf_obj_get (path, &p.counts);
    if (rc < 0)
      return rc;
  }
  *ret = p;
  progs_init (&p);
  return 0;
}

/* Remove the entry NAME of PARENT_FD and its pins. */
static void
remove_entry (int parent_fd, const char *name)
{
  cleanup_close int fd = openat (
      parent_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  DIR *dir;
  struct dirent *e;

  if (fd < 0)
    return;
  dir = fdopendir (fd);
  if (dir == NULL)
    return;
  fd = -1; /* the DIR has it */
  while ((e = readdir (dir)) != NULL)
    if (strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0)
      (void)unlinkat (dirfd (dir), e->d_name, 0);
  closedir (dir);
  (void)unlinkat (parent_fd, name, AT_REMOVEDIR);
}

/* Under the lock: remove what killed builders left, and the oldest
 * entries past the bound. */
static void
tidy (int dirfd)
{
  cleanup_close int fd
      = openat (dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  char oldest[NAME_MAX + 1] = "";
  struct timespec oldest_at = { 0 };
  size_t entries = 0;
  struct dirent *e;
  DIR *dir;

  if (fd < 0 || (dir = fdopendir (fd)) == NULL)
    return;
  fd = -1;
  while ((e = readdir (dir)) != NULL)
    {
      struct stat st;
      if (e->d_name[0] == '.')
        continue;
      if (strncmp (e->d_name, BUILD_PREFIX, strlen (BUILD_PREFIX)) == 0)
        {
          remove_entry (dirfd, e->d_name);
          continue;
        }
      if (fstatat (dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      entries++;
      if (oldest[0] == '\0' || st.st_mtim.tv_sec < oldest_at.tv_sec
          || (st.st_mtim.tv_sec == oldest_at.tv_sec
              && st.st_mtim.tv_nsec < oldest_at.tv_nsec))
        {
          snprintf (oldest, sizeof (oldest), "%s", e->d_name);
          oldest_at = st.st_mtim;
        }
    }
  closedir (dir);
  /* One out for the one about to come in; more only after a bound was
   * lowered, which the next builds catch up with. */
  if (entries >= NETGUARD_SHARE_MAX && oldest[0] != '\0')
    remove_entry (dirfd, oldest);
}

/* Pin P and the description D in PIN_DIR/build-PID, then rename it to
 * ENTRY (under the lock on PIN_DIR). */
static int
pin_entry (int dirfd, const char *pin_dir, const char *name,
           const struct netguard_rules *r, struct desc *d,
           const struct netguard_progs *p)
{
  cleanup_free char *build = xasprintf (BUILD_PREFIX "%d", (int)getpid ());
  cleanup_free char *build_path = xasprintf ("%s/%s", pin_dir, build);
  cleanup_close int desc = -1;
  struct moat_error *err = NULL;
  uint32_t zero = 0;
  int rc;

  if (mkdirat (dirfd, build, 0700) < 0)
    return -errno;
  describe_lists (r, d);
  rc = bpf_map_create (BPF_MAP_TYPE_ARRAY, sizeof (zero), (uint32_t)d->n, 1,
                       BPF_F_RDONLY_PROG, "moat_desc", &desc, &err);
  moat_error_free (&err);
  if (rc == 0)
    rc = bpf_map_update (desc, &zero, d->data);
  if (rc == 0)
    rc = bpf_map_freeze (desc);
  for (int k = 0; rc == 0 && k < NETGUARD_N_PROGS; k++)
    if (netguard_prog_used (r, (enum netguard_prog)k))
      {
        cleanup_free char *path = xasprintf ("%s/%s", build_path, pin_names[k]);
        rc = bpf_obj_pin (p->fd[k], path);
      }
  if (rc == 0)
    {
      cleanup_free char *path = xasprintf ("%s/" COUNTS_PIN, build_path);
      rc = bpf_obj_pin (p->counts, path);
    }
  if (rc == 0)
    {
      /* The description last: an entry without it is never opened. */
      cleanup_free char *path = xasprintf ("%s/" DESC_PIN, build_path);
      rc = bpf_obj_pin (desc, path);
    }
  if (rc == 0 && renameat (dirfd, build, dirfd, name) < 0)
    rc = -errno;
  if (rc < 0)
    remove_entry (dirfd, build);
  return rc;
}

/* PIN_DIR exists, in a BPF filesystem: where its parent is none, a BPF
 * filesystem is mounted there first, as systemd does at /sys/fs/bpf. */
static int
open_pin_dir (const char *pin_dir)
{
  cleanup_free char *parent = xstrdup (pin_dir);
  char *slash = strrchr (parent, '/');
  struct statfs fs;
  int fd;

  if (slash == NULL || slash == parent)
    return -EINVAL;
  *slash = '\0';
  if (statfs (parent, &fs) < 0)
    return -errno;
  if (fs.f_type != BPF_FS_MAGIC
      && mount ("bpf", parent, "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                "mode=0700")
             < 0)
    return -errno;
  if (mkdir (pin_dir, 0700) < 0 && errno != EEXIST)
    return -errno;
  fd = open (pin_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return -errno;
  if (fstatfs (fd, &fs) < 0 || fs.f_type != BPF_FS_MAGIC)
    {
      close (fd);
      return -ENOTSUP;
    }
  return fd;
}

/* Build the entry NAME under the lock, or open it if another create built
 * it meanwhile. Where nothing can be pinned: *ret_shared false, and the
 * programs are this container's own. */
static int
build_shared (const char *pin_dir, const char *entry, const char *name,
              const struct netguard_rules *r, struct desc *d,
              struct netguard_progs *ret, bool *ret_shared,
              struct moat_error **err)
{
  cleanup_close int dirfd = open_pin_dir (pin_dir);
  int rc;

  *ret_shared = false;
  if (dirfd < 0 || flock (dirfd, LOCK_EX) < 0)
    return build_own (r, ret, err);
  rc = open_entry (entry, r, d, ret);
  if (rc == 0)
    {
      *ret_shared = true;
      return 0;
    }
  if (rc == -ESTALE) /* another description under this name */
    return build_own (r, ret, err);
  tidy (dirfd);
  if (build_own (r, ret, err) < 0)
    return -1;
  *ret_shared = pin_entry (dirfd, pin_dir, name, r, d, ret) == 0;
  return 0;
}

int
netguard_progs_get (const struct netguard_rules *r, const char *pin_dir,
                    struct netguard_progs *ret, bool *ret_shared,
                    struct moat_error **err)
{
  __attribute__ ((cleanup (desc_free))) struct desc d = { 0 };
  cleanup_free char *name = NULL, *entry = NULL;
  int rc;

  progs_init (ret);
  *ret_shared = false;
  if (netguard_rules_check (r, err) < 0)
    return -1;
  if (pin_dir == NULL)
    return build_own (r, ret, err);
  /* The head alone: on a hit, the lists are compared where they are. */
  if (describe_head (r, &d, err) < 0)
    return -1;
  name = entry_name (r, &d);
  entry = xasprintf ("%s/%s", pin_dir, name);
  rc = open_entry (entry, r, &d, ret);
  if (rc == 0)
    {
      *ret_shared = true;
      return 0;
    }
  if (rc == -ESTALE)
    return build_own (r, ret, err);
  return build_shared (pin_dir, entry, name, r, &d, ret, ret_shared, err);
}
