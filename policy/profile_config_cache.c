/* The operator config's cache: its egress_* lists as parsed and checked,
 * kept beside the rest of its text, so that a verb reading a config with
 * 10,000-entry lists neither builds 20,000 JSON nodes nor parses 20,000
 * CIDRs again (about 5 ms of CPU a verb, for create and for delete).
 *
 * An entry holds the whole text of the config it was made from, compared
 * byte for byte with the text this verb read (once, into memory: what is
 * judged is what was compared, whatever the file holds by now); the rest
 * of the config without its lists, which goes through the same reading and
 * checks as the whole file; the lists, entry by entry; and this build's
 * version, since a later moat may check lists otherwise. One entry per
 * config path (its name is a hash of the path), so a changed config
 * replaces its entry rather than adding one.
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
#include <unistd.h>

#define CACHE_MAGIC "MOATOCF1"
#define CACHE_MAX_SIZE (16u * 1024 * 1024)
#define ENTRY_SIZE 20 /* family, prefix, port (2), address (16) */

struct cache_header
{
  char magic[8];
  char build[48]; /* "moat BUILD-ID" (or "moat VERSION COMMIT") */
  uint64_t text_len;
  uint64_t reduced_len;
  /* Of everything after the text (which is compared whole). */
  uint64_t checksum;
  /* Per scope: has_deny, n_deny, allow_kind, n_allow. */
  uint32_t scope[PROFILE_CONFIG_SCOPES][4];
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

static void
put_entries (char **p, const struct cidr *list, size_t n)
{
  for (size_t i = 0; i < n; i++, *p += ENTRY_SIZE)
    {
      (*p)[0] = list[i].family == AF_INET ? 4 : 6;
      (*p)[1] = (char)list[i].prefix;
      memcpy (*p + 2, &list[i].port, 2);
      memcpy (*p + 4, list[i].addr, 16);
    }
}

static int
get_entries (const char **p, const char *end, size_t n, struct cidr **ret)
{
  struct cidr *list;

  if ((size_t)(end - *p) / ENTRY_SIZE < n)
    return -1;
  list = xcalloc (n ? n : 1, sizeof (*list));
  for (size_t i = 0; i < n; i++, *p += ENTRY_SIZE)
    {
      const unsigned char *e = (const unsigned char *)*p;
      list[i].family = e[0] == 4 ? AF_INET : AF_INET6;
      list[i].prefix = e[1];
      memcpy (&list[i].port, e + 2, 2);
      memcpy (list[i].addr, e + 4, 16);
      if ((e[0] != 4 && e[0] != 6) || e[1] > (e[0] == 4 ? 32 : 128))
        {
          free (list);
          return -1;
        }
    }
  *ret = list;
  return 0;
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

static int
read_entry (int dirfd, const char *name, char **ret, size_t *ret_len)
{
  cleanup_close int fd
      = openat (dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  struct stat st;

  cleanup_free char *buf = NULL;
  size_t len = 0;

  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)
      || st.st_uid != geteuid () || st.st_nlink != 1
      || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 || st.st_size > CACHE_MAX_SIZE)
    return -1;
  /* Its size is known: one buffer, read whole. */
  buf = xmalloc ((size_t)st.st_size + 1);
  while (len < (size_t)st.st_size)
    {
      ssize_t r = read (fd, buf + len, (size_t)st.st_size - len);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        return -1;
      len += (size_t)r;
    }
  *ret = steal_pointer (&buf);
  *ret_len = len;
  return 0;
}

static int
parse_entry (const char *buf, size_t len, const char *text, size_t text_len,
             char **ret_reduced, size_t *ret_reduced_len,
             struct profile_network_lists *lists)
{
  const char *end = buf + len, *p = buf + sizeof (struct cache_header);
  struct cache_header h;
  char build[48];

  if (len < sizeof (h))
    return -1;
  memcpy (&h, buf, sizeof (h));
  header_build (build);
  if (memcmp (h.magic, CACHE_MAGIC, sizeof (h.magic)) != 0
      || memcmp (h.build, build, sizeof (build)) != 0 || h.text_len != text_len
      || h.reduced_len > len || (size_t)(end - p) < text_len + h.reduced_len
      || h.checksum != hash64_words (p + text_len, (size_t)(end - p) - text_len)
      || memcmp (p, text, text_len) != 0)
    return -1;
  p += text_len;
  *ret_reduced = xmalloc (h.reduced_len + 1);
  memcpy (*ret_reduced, p, h.reduced_len);
  (*ret_reduced)[h.reduced_len] = '\0';
  *ret_reduced_len = h.reduced_len;
  p += h.reduced_len;
  for (int s = 0; s < PROFILE_CONFIG_SCOPES; s++)
    {
      struct profile_network_lists *l = &lists[s];
      l->has_deny = h.scope[s][0] != 0;
      l->allow_kind = (enum profile_allow_kind)h.scope[s][2];
      l->n_deny = h.scope[s][1];
      l->n_allow = h.scope[s][3];
      if (h.scope[s][2] > PROFILE_ALLOW_PRIVATE
          || get_entries (&p, end, l->n_deny, &l->deny) < 0
          || get_entries (&p, end, l->n_allow, &l->allow) < 0)
        return -1;
    }
  return p == end ? 0 : -1;
}

int
profile_config_cache_load (const char *cache_dir, const char *config_path,
                           const char *text, size_t text_len,
                           char **ret_reduced, size_t *ret_reduced_len,
                           struct profile_network_lists *ret_lists)
{
  cleanup_close int dirfd = open_cache_dir (cache_dir, false);
  cleanup_free char *name = entry_name (config_path);
  cleanup_free char *buf = NULL;
  struct profile_network_lists lists[PROFILE_CONFIG_SCOPES] = { 0 };
  size_t len = 0;

  if (dirfd < 0 || read_entry (dirfd, name, &buf, &len) < 0)
    return -1;
  if (parse_entry (buf, len, text, text_len, ret_reduced, ret_reduced_len,
                   lists)
      < 0)
    {
      for (int s = 0; s < PROFILE_CONFIG_SCOPES; s++)
        profile_network_lists_free (&lists[s]);
      return -1;
    }
  memcpy (ret_lists, lists, sizeof (lists));
  return 0;
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
  cleanup_free char *buf = NULL;
  struct json_writer *w;
  struct cache_header h = { .text_len = text_len };
  size_t reduced_len, len, n_entries = 0;
  char *p;

  if (dirfd < 0)
    return;
  w = json_writer_new (false);
  write_without_lists (w, root, true);
  reduced = json_writer_finish (w);
  if (reduced == NULL)
    return;
  reduced_len = strlen (reduced);
  h.reduced_len = reduced_len;
  for (int s = 0; s < PROFILE_CONFIG_SCOPES; s++)
    {
      h.scope[s][0] = lists[s].has_deny;
      h.scope[s][1] = (uint32_t)lists[s].n_deny;
      h.scope[s][2] = lists[s].allow_kind;
      h.scope[s][3] = (uint32_t)lists[s].n_allow;
      n_entries += lists[s].n_deny + lists[s].n_allow;
    }
  len = sizeof (h) + text_len + reduced_len + n_entries * ENTRY_SIZE;
  if (len > CACHE_MAX_SIZE)
    return;
  buf = xmalloc (len);
  p = buf + sizeof (h);
  memcpy (p, text, text_len);
  memcpy (p + text_len, reduced, reduced_len);
  p += text_len + reduced_len;
  for (int s = 0; s < PROFILE_CONFIG_SCOPES; s++)
    {
      put_entries (&p, lists[s].deny, lists[s].n_deny);
      put_entries (&p, lists[s].allow, lists[s].n_allow);
    }
  memcpy (h.magic, CACHE_MAGIC, sizeof (h.magic));
  header_build (h.build);
  h.checksum
      = hash64_words (buf + sizeof (h) + text_len, len - sizeof (h) - text_len);
  memcpy (buf, &h, sizeof (h));
  /* Written unnamed and linked whole: a moat killed while writing
   * leaves no partial file behind (entries run to megabytes). */
  (void)write_file_atomic (dirfd, name, buf, len, 0600);
}
