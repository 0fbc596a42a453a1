/* The operator config's cache: its egress_* lists as parsed and checked,
 * kept beside the rest of its text, so that a verb reading a config with
 * 10,000-entry lists neither builds 20,000 JSON nodes nor parses 20,000
 * CIDRs again (about 5 ms of CPU a verb, for create and for delete).
 *
 * An entry holds the whole text of the config it was made from, compared
 * byte for byte with the config's file, both read a piece at a time (on a
 * hit the config is never held whole: what is judged is the entry's, made
 * from the very bytes just compared, whatever the file holds by now); the
 * rest of the config without its lists, which goes through the same
 * reading and checks as the whole file; the lists, entry by entry; and
 * this build's stamp, since another build may check lists otherwise. One entry
 * per config path (its name is a hash of the path), so a changed config
 * replaces its entry rather than adding one.
 *
 * The lists are kept as the arrays the profile holds (struct cidr, this
 * build's layout: the entry is stamped with the build), read straight into
 * them, and have a checksum of their own: a verb that does not judge
 * (delete, state ...) needs the config without them, and reads and checks
 * only that part of the entry.
 *
 * Only our own files are trusted: the directory and the entry must belong
 * to the effective user and be writable by nobody else, the entry a
 * regular file opened without following a symlink, with one link. An
 * entry that fails any check is ignored and rewritten. */
#include "profile.h"
#include "profile_internal.h"
#include "../lib/util.h"
#include "../oci/json.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define CACHE_MAGIC "MOATOCF2"
#define CACHE_MAX_SIZE (16u * 1024 * 1024)

/* The header, the config's text (compared whole), the text without its
 * lists, then per scope its deny and allow entries. */
struct cache_header
{
  char magic[8];
  char build[48]; /* "moat BUILD-ID" (or "moat VERSION COMMIT") */
  uint64_t text_len;
  uint64_t reduced_len;
  uint64_t reduced_checksum;
  uint64_t lists_checksum;
  /* Per scope: has_deny, n_deny, allow_kind, n_allow. */
  uint32_t scope[PROFILE_CONFIG_SCOPES][4];
  /* Per scope: the digests of its profile's final lists (checksummed
   * with the lists). */
  char digests[PROFILE_CONFIG_SCOPES][2][CIDR_LIST_DIGEST_LEN];
};

static const char *const list_keys[]
    = { "egress_deny", "egress_allow", "egress_allow_private", NULL };

static void
header_build (char build[48])
{
  /* The build-id first: a cache written by other code (a patched tree,
   * a build from a tarball, whose commit reads "unknown") is not this
   * code's parse and must not be trusted as one. */
  memset (build, 0, 48);
  snprintf (build, 48, "%s", program_identity ());
}

static bool
is_list_key (const char *key)
{
  for (size_t i = 0; list_keys[i]; i++)
    if (strcmp (key, list_keys[i]) == 0)
      return true;
  return false;
}

/* obj without its egress_* lists; with nested, the same for each object
 * under "profiles". */
static void
write_without_lists (struct json_writer *w, const json_node *obj, bool nested)
{
  jw_object_begin (w);
  for (size_t i = 0; i < json_object_len (obj); i++)
    {
      const char *key = json_object_key (obj, i);
      const json_node *v = json_object_value (obj, i);
      if (is_list_key (key))
        continue;
      jw_key (w, key);
      if (nested && strcmp (key, "profiles") == 0 && json_is_object (v))
        {
          jw_object_begin (w);
          for (size_t k = 0; k < json_object_len (v); k++)
            {
              const json_node *settings = json_object_value (v, k);
              jw_key (w, json_object_key (v, k));
              if (json_is_object (settings))
                write_without_lists (w, settings, false);
              else
                jw_node (w, settings);
            }
          jw_object_end (w);
        }
      else
        jw_node (w, v);
    }
  jw_object_end (w);
}

/* The entries of every list in order, checksummed list by list, so that
 * they can be read straight into the arrays they fill. A fast hash, not a
 * cryptographic digest, is enough: an entry is trusted only when it is
 * ours (above), so the checksum catches a torn or stale entry, not a
 * forged one. */
static uint64_t
lists_checksum (const struct profile_network_lists *lists)
{
  uint64_t sum = FNV1A64_INIT;

  for (int s = 0; s < PROFILE_CONFIG_SCOPES; s++)
    {
      const struct profile_network_lists *l = &lists[s];
      const uint64_t entries[2]
          = { hash64_words (l->deny, l->n_deny * sizeof (*l->deny)),
              hash64_words (l->allow, l->n_allow * sizeof (*l->allow)) };
      sum = fnv1a64 (l->deny_digest, sizeof (l->deny_digest), sum);
      sum = fnv1a64 (l->allow_digest, sizeof (l->allow_digest), sum);
      sum = fnv1a64 (entries, sizeof (entries), sum);
    }
  return sum;
}

static bool
entries_valid (const struct cidr *list, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (!((list[i].family == AF_INET && list[i].prefix <= 32)
          || (list[i].family == AF_INET6 && list[i].prefix <= 128)))
      return false;
  return true;
}

/* The cache directory, or -1 where it is not ours alone. */
static int
open_cache_dir (const char *cache_dir, bool create)
{
  int fd;
  struct stat st;

  if (create && mkdir_p (cache_dir, 0700) < 0)
    return -1;
  fd = open (cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd >= 0
      && (fstat (fd, &st) < 0 || st.st_uid != geteuid ()
          || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0))
    {
      close (fd);
      return -1;
    }
  return fd;
}

static char *
entry_name (const char *config_path)
{
  return xasprintf ("config-%016" PRIx64 ".cache",
                    hash64_words (config_path, strlen (config_path)));
}

/* The entry NAME, opened where it is ours alone, with its size. */
static int
open_entry (int dirfd, const char *name, uint64_t *ret_size)
{
  int fd = openat (dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  struct stat st;

  if (fd >= 0
      && (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)
          || st.st_uid != geteuid () || st.st_nlink != 1
          || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0
          || st.st_size > CACHE_MAX_SIZE))
    {
      close (fd);
      return -1;
    }
  *ret_size = fd >= 0 ? (uint64_t)st.st_size : 0;
  return fd;
}

/* The entry's copy of the config (TEXT_LEN bytes) is, byte for byte, what
 * the config's file holds now: both read a piece at a time, the config to
 * its end, nothing of their size allocated. What is then judged is the
 * entry's, made from those very bytes. */
static bool
same_text (int fd, int config_fd, uint64_t text_len)
{
  char piece[16384], config[sizeof (piece)];
  struct stat st;

  if (fstat (config_fd, &st) < 0 || (uint64_t)st.st_size != text_len)
    return false;
  for (uint64_t at = 0; at < text_len; at += sizeof (piece))
    {
      size_t n = text_len - at < sizeof (piece) ? (size_t)(text_len - at)
                                                : sizeof (piece);
      if (pread_all (fd, piece, n, (off_t)(sizeof (struct cache_header) + at))
              < 0
          || pread_all (config_fd, config, n, (off_t)at) < 0
          || memcmp (piece, config, n) != 0)
        return false;
    }
  /* Nothing after it: a config that grew meanwhile is another one. */
  return pread (config_fd, config, 1, (off_t)text_len) == 0;
}

static int
read_list (int fd, off_t *at, size_t n, struct cidr **ret)
{
  struct cidr *list = xmalloc ((n ? n : 1) * sizeof (*list));

  if (pread_all (fd, list, n * sizeof (*list), *at) < 0
      || !entries_valid (list, n))
    {
      free (list);
      return -1;
    }
  *at += (off_t)(n * sizeof (*list));
  *ret = list;
  return 0;
}

/* The lists, after the header, the text and the reduced text. */
static int
read_lists (int fd, const struct cache_header *h,
            struct profile_network_lists *lists)
{
  off_t at = (off_t)(sizeof (*h) + h->text_len + h->reduced_len);

  for (int s = 0; s < PROFILE_CONFIG_SCOPES; s++)
    {
      struct profile_network_lists *l = &lists[s];
      l->has_deny = h->scope[s][0] != 0;
      l->allow_kind = (enum profile_allow_kind)h->scope[s][2];
      l->n_deny = h->scope[s][1];
      l->n_allow = h->scope[s][3];
      memcpy (l->deny_digest, h->digests[s][0], CIDR_LIST_DIGEST_LEN);
      memcpy (l->allow_digest, h->digests[s][1], CIDR_LIST_DIGEST_LEN);
      l->deny_digest[CIDR_LIST_DIGEST_LEN - 1] = '\0';
      l->allow_digest[CIDR_LIST_DIGEST_LEN - 1] = '\0';
      if (read_list (fd, &at, l->n_deny, &l->deny) < 0
          || read_list (fd, &at, l->n_allow, &l->allow) < 0)
        return -1;
    }
  return lists_checksum (lists) == h->lists_checksum ? 0 : -1;
}

/* The header is this build's, for TEXT, and the sizes it gives add up to
 * the entry's. */
static bool
header_fits (const struct cache_header *h, uint64_t size)
{
  char build[48];
  uint64_t entries = 0;

  header_build (build);
  if (memcmp (h->magic, CACHE_MAGIC, sizeof (h->magic)) != 0
      || memcmp (h->build, build, sizeof (build)) != 0
      || h->text_len > CACHE_MAX_SIZE || h->reduced_len > CACHE_MAX_SIZE)
    return false;
  for (int s = 0; s < PROFILE_CONFIG_SCOPES; s++)
    {
      if (h->scope[s][2] > PROFILE_ALLOW_PRIVATE)
        return false;
      entries += (uint64_t)h->scope[s][1] + h->scope[s][3];
    }
  return size
         == sizeof (*h) + h->text_len + h->reduced_len
                + entries * sizeof (struct cidr);
}

int
profile_config_cache_load (const char *cache_dir, const char *config_path,
                           int config_fd, bool want_lists, char **ret_reduced,
                           size_t *ret_reduced_len,
                           struct profile_network_lists *ret_lists)
{
  cleanup_close int dirfd = open_cache_dir (cache_dir, false);
  cleanup_free char *name = entry_name (config_path);
  cleanup_close int fd = -1;
  cleanup_free char *reduced = NULL;
  struct profile_network_lists lists[PROFILE_CONFIG_SCOPES] = { 0 };
  struct cache_header h;
  uint64_t size = 0;

  if (dirfd < 0 || (fd = open_entry (dirfd, name, &size)) < 0
      || pread_all (fd, &h, sizeof (h), 0) < 0 || !header_fits (&h, size)
      || !same_text (fd, config_fd, h.text_len))
    return -1;
  reduced = xmalloc (h.reduced_len + 1);
  if (pread_all (fd, reduced, h.reduced_len, (off_t)(sizeof (h) + h.text_len))
          < 0
      || hash64_words (reduced, h.reduced_len) != h.reduced_checksum)
    return -1;
  reduced[h.reduced_len] = '\0';
  if (want_lists && read_lists (fd, &h, lists) < 0)
    {
      for (int s = 0; s < PROFILE_CONFIG_SCOPES; s++)
        profile_network_lists_free (&lists[s]);
      return -1;
    }
  *ret_reduced = steal_pointer (&reduced);
  *ret_reduced_len = h.reduced_len;
  memcpy (ret_lists, lists, sizeof (lists));
  return 0;
}

/* The entry, written whole (the parts one after the other). */
static void
write_entry (int dirfd, const char *name, const struct iovec *parts,
             size_t n_parts, size_t len)
{
  cleanup_free char *buf = xmalloc (len ? len : 1);
  size_t at = 0;

  /* An empty list's part has no base (memcpy wants one even for 0). */
  for (size_t i = 0; i < n_parts; i++)
    if (parts[i].iov_len)
      {
        memcpy (buf + at, parts[i].iov_base, parts[i].iov_len);
        at += parts[i].iov_len;
      }
  /* Written unnamed and linked whole: a moat killed while writing
   * leaves no partial file behind (entries run to megabytes). */
  (void)write_file_atomic (dirfd, name, buf, len, 0600);
}

void
profile_config_cache_store (const char *cache_dir, const char *config_path,
                            const char *text, size_t text_len,
                            const json_node *root,
                            const struct profile_network_lists *lists)
{
  cleanup_close int dirfd = open_cache_dir (cache_dir, true);
  cleanup_free char *name = entry_name (config_path);
  cleanup_free char *reduced = NULL;
  struct json_writer *w;
  struct cache_header h = { .text_len = text_len };
  struct iovec parts[3 + 2 * PROFILE_CONFIG_SCOPES];
  size_t n_parts = 0, len = 0;

  if (dirfd < 0)
    return;
  w = json_writer_new (false);
  write_without_lists (w, root, true);
  reduced = json_writer_finish (w);
  if (reduced == NULL)
    return;
  memcpy (h.magic, CACHE_MAGIC, sizeof (h.magic));
  header_build (h.build);
  h.reduced_len = strlen (reduced);
  h.reduced_checksum = hash64_words (reduced, h.reduced_len);
  h.lists_checksum = lists_checksum (lists);
  parts[n_parts++] = (struct iovec){ &h, sizeof (h) };
  parts[n_parts++] = (struct iovec){ (void *)text, text_len };
  parts[n_parts++] = (struct iovec){ reduced, h.reduced_len };
  for (int s = 0; s < PROFILE_CONFIG_SCOPES; s++)
    {
      h.scope[s][0] = lists[s].has_deny;
      h.scope[s][1] = (uint32_t)lists[s].n_deny;
      h.scope[s][2] = lists[s].allow_kind;
      h.scope[s][3] = (uint32_t)lists[s].n_allow;
      memcpy (h.digests[s][0], lists[s].deny_digest, CIDR_LIST_DIGEST_LEN);
      memcpy (h.digests[s][1], lists[s].allow_digest, CIDR_LIST_DIGEST_LEN);
      parts[n_parts++]
          = (struct iovec){ lists[s].deny,
                            lists[s].n_deny * sizeof (*lists[s].deny) };
      parts[n_parts++]
          = (struct iovec){ lists[s].allow,
                            lists[s].n_allow * sizeof (*lists[s].allow) };
    }
  for (size_t i = 0; i < n_parts; i++)
    len += parts[i].iov_len;
  if (len <= CACHE_MAX_SIZE)
    write_entry (dirfd, name, parts, n_parts, len);
}
