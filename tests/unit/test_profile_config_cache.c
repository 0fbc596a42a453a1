/* The operator config's cache (policy/profile_config_cache.c): a hit gives
 * what parsing the config gives; a changed config is never served from
 * the entry of the old one; an entry is trusted only where it and its
 * directory are the effective user's alone. Entries with other lists than
 * their text's are forged with the cache's own writer, so that a trusted
 * entry shows in the lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../oci/json.h"
#include "../../policy/profile.h"
#include "../../policy/profile_internal.h"
#include "../../lib/util.h"

struct fixture
{
  char dir[64];
  char config[96];
  char cache[96];
};

static int
setup (void **state)
{
  struct fixture *f = xcalloc (1, sizeof (*f));

  snprintf (f->dir, sizeof (f->dir), "/tmp/moat-test-ccache-XXXXXX");
  assert_non_null (mkdtemp (f->dir));
  snprintf (f->config, sizeof (f->config), "%s/config.json", f->dir);
  snprintf (f->cache, sizeof (f->cache), "%s/cache", f->dir);
  *state = f;
  return 0;
}

static int
teardown (void **state)
{
  struct fixture *f = *state;
  cleanup_free char *cmd = xasprintf ("rm -rf '%s'", f->dir);

  assert_int_equal (system (cmd), 0);
  free (f);
  return 0;
}

static void
write_text (const char *path, const char *text)
{
  FILE *out = fopen (path, "we");
  assert_non_null (out);
  fputs (text, out);
  fclose (out);
}

/* A config whose egress_deny holds n entries 203.X.Y.0/24, then last. */
static char *
long_config (size_t n, const char *last)
{
  char *text = xstrdup ("{\"egress_deny\":[");
  for (size_t i = 0; i < n; i++)
    {
      char *next
          = xasprintf ("%s\"203.%zu.%zu.0/24\",", text, i / 256, i % 256);
      free (text);
      text = next;
    }
  {
    char *next = xasprintf (
        "%s\"%s\"],\"limits\":{\"pids\":77},\"profiles\":{\"egress\":"
        "{\"egress_allow\":[\"198.51.100.9/32:443\"]}}}\n",
        text, last);
    free (text);
    text = next;
  }
  return text;
}

static struct profile *
load_cached (const struct fixture *f)
{
  struct profile *p = NULL;
  struct moat_error *err = NULL;

  if (profile_load_cached (f->config, f->cache, "egress", &p, NULL, &err) < 0)
    fail_msg ("%s", err->msg);
  return p;
}

static struct profile *
load_parsed (const struct fixture *f)
{
  struct profile *p = NULL;
  struct moat_error *err = NULL;

  if (profile_load (f->config, "egress", &p, NULL, &err) < 0)
    fail_msg ("%s", err->msg);
  return p;
}

static void
assert_same_cidrs (const struct cidr *a, const struct cidr *b, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      assert_int_equal (a[i].family, b[i].family);
      assert_int_equal (a[i].prefix, b[i].prefix);
      assert_int_equal (a[i].port, b[i].port);
      assert_memory_equal (a[i].addr, b[i].addr, 16);
    }
}

static void
assert_same_profile (const struct profile *a, const struct profile *b)
{
  assert_int_equal (a->pids_limit, b->pids_limit);
  assert_int_equal (a->n_deny, b->n_deny);
  assert_int_equal (a->n_allow, b->n_allow);
  assert_int_equal (a->allowlist, b->allowlist);
  assert_same_cidrs (a->deny, b->deny, a->n_deny);
  assert_same_cidrs (a->allow, b->allow, a->n_allow);
}

/* The digests the profile carries (from the entry, or taken when it was
 * filled) are those of its lists. */
static void
assert_true_digests (const struct profile *p)
{
  char digest[CIDR_LIST_DIGEST_LEN];

  assert_true (p->n_deny > PROFILE_AUDIT_LIST_HEAD);
  cidr_list_digest (p->deny, p->n_deny, digest);
  assert_string_equal (p->deny_digest, digest);
  if (p->n_allow > PROFILE_AUDIT_LIST_HEAD)
    {
      cidr_list_digest (p->allow, p->n_allow, digest);
      assert_string_equal (p->allow_digest, digest);
    }
  else
    assert_string_equal (p->allow_digest, "");
}

/* The one entry in the cache directory: its inode (0: none). */
static ino_t
entry_inode (const struct fixture *f)
{
  DIR *d = opendir (f->cache);
  struct dirent *e;
  ino_t ino = 0;

  if (d == NULL)
    return 0;
  while ((e = readdir (d)) != NULL)
    if (strncmp (e->d_name, "config-", 7) == 0)
      {
        struct stat st;
        cleanup_free char *path = xasprintf ("%s/%s", f->cache, e->d_name);
        assert_int_equal (stat (path, &st), 0);
        assert_int_equal (ino, 0); /* one entry per config path */
        ino = st.st_ino;
      }
  closedir (d);
  return ino;
}

static char *
entry_path (const struct fixture *f)
{
  DIR *d = opendir (f->cache);
  struct dirent *e;
  char *path = NULL;

  assert_non_null (d);
  while ((e = readdir (d)) != NULL)
    if (strncmp (e->d_name, "config-", 7) == 0)
      path = xasprintf ("%s/%s", f->cache, e->d_name);
  closedir (d);
  assert_non_null (path);
  return path;
}

static void
test_hit_gives_what_parsing_gives (void **state)
{
  struct fixture *f = *state;
  cleanup_free char *text = long_config (2000, "198.51.100.7/32");
  cleanup_profile struct profile *parsed = NULL, *first = NULL, *hit = NULL;
  ino_t ino;

  write_text (f->config, text);
  parsed = load_parsed (f);
  assert_int_equal (entry_inode (f), 0);
  first = load_cached (f); /* parses, fills the cache */
  ino = entry_inode (f);
  assert_int_not_equal (ino, 0);
  hit = load_cached (f); /* read from it: nothing written */
  assert_int_equal (entry_inode (f), ino);
  assert_int_equal (parsed->n_deny, 4 + 2001);
  assert_int_equal (parsed->pids_limit, 77);
  assert_int_equal (parsed->n_allow, 1);
  assert_true (parsed->allowlist);
  assert_same_profile (parsed, first);
  assert_same_profile (parsed, hit);
  assert_true_digests (first);
  assert_true_digests (hit);
}

/* The digests the entry keeps are each profile's own, its lists taken
 * from every scope (the top level's allowlist, one profile's deny list),
 * on a miss and on a hit. */
static void
test_digests_per_profile (void **state)
{
  struct fixture *f = *state;
  cleanup_free char *allow = xstrdup ("");
  cleanup_free char *deny = xstrdup ("");
  cleanup_free char *text = NULL;

  for (int i = 0; i < 40; i++)
    {
      char *a
          = xasprintf ("%s%s\"198.51.%d.0/24:443\"", allow, i ? "," : "", i);
      char *d = xasprintf ("%s%s\"203.0.%d.0/24\"", deny, i ? "," : "", i);
      free (allow);
      free (deny);
      allow = a;
      deny = d;
    }
  text = xasprintf ("{\"egress_allow\":[%s],\"profiles\":{\"egress\":"
                    "{\"egress_deny\":[%s]}}}\n",
                    allow, deny);
  write_text (f->config, text);
  for (int round = 0; round < 2; round++) /* fills the entry, then a hit */
    for (int k = 0; k < 2; k++)
      {
        cleanup_profile struct profile *p = NULL;
        struct moat_error *err = NULL;
        char digest[CIDR_LIST_DIGEST_LEN];

        if (profile_load_cached (f->config, f->cache, k ? "egress" : "strict",
                                 &p, NULL, &err)
            < 0)
          fail_msg ("%s", err->msg);
        assert_int_equal (p->n_allow, 40);
        cidr_list_digest (p->allow, p->n_allow, digest);
        assert_string_equal (p->allow_digest, digest);
        if (k == 0)
          assert_string_equal (p->deny_digest, ""); /* the 4 built-in */
        else
          assert_true_digests (p);
      }
}

/* Same size, one entry different: the next load has the new entry. */
static void
test_changed_config_not_stale (void **state)
{
  struct fixture *f = *state;
  cleanup_free char *old_text = long_config (2000, "198.51.100.7/32");
  cleanup_free char *new_text = long_config (2000, "198.51.100.8/32");
  cleanup_profile struct profile *old = NULL, *changed = NULL, *again = NULL;
  struct cidr want;

  assert_int_equal (strlen (old_text), strlen (new_text));
  write_text (f->config, old_text);
  old = load_cached (f);
  write_text (f->config, new_text);
  changed = load_cached (f);
  again = load_cached (f); /* the new entry, now a hit */
  assert_int_equal (cidr_parse ("198.51.100.8/32", &want), 0);
  assert_int_equal (changed->n_deny, old->n_deny);
  assert_same_cidrs (&changed->deny[changed->n_deny - 1], &want, 1);
  assert_same_profile (changed, again);
  assert_true_digests (changed);
  assert_true_digests (again);
}

/* An entry for the config's text with lists of its own: what a hit
 * would show. */
static void
forge_entry (const struct fixture *f)
{
  cleanup_free char *text = NULL;
  size_t len = 0;
  json_node *root = NULL;
  struct moat_error *err = NULL;
  struct cidr forged;
  struct profile_network_lists lists[PROFILE_CONFIG_SCOPES] = { 0 };

  assert_int_equal (read_file_at (AT_FDCWD, f->config, 1 << 20, &text, &len),
                    0);
  assert_int_equal (json_parse (text, len, 1 << 20, &root, &err), 0);
  assert_int_equal (cidr_parse ("192.0.2.99/32", &forged), 0);
  lists[0].has_deny = true;
  lists[0].deny = &forged;
  lists[0].n_deny = 1;
  profile_config_cache_store (f->cache, f->config, text, len, root, lists);
  json_free (root);
}

/* The load after an entry was forged for the config (10 entries, pids
 * 77) and tampered with. */
static struct profile *
load_forged (const struct fixture *f,
             void (*tamper) (const struct fixture *, const char *))
{
  cleanup_free char *text = long_config (10, "198.51.100.7/32");
  cleanup_free char *path = NULL;

  write_text (f->config, text);
  forge_entry (f);
  path = entry_path (f);
  if (tamper)
    tamper (f, path);
  return load_cached (f);
}

/* Does the load after tampering show the forged list? */
static bool
forged_entry_used (const struct fixture *f,
                   void (*tamper) (const struct fixture *, const char *))
{
  cleanup_profile struct profile *p = load_forged (f, tamper);

  assert_true (p->n_deny == 4 + 1 || p->n_deny == 4 + 11);
  return p->n_deny == 4 + 1;
}

/* The control of the tests below: an entry that passes is used. */
static void
test_forged_entry_shows (void **state)
{
  assert_true (forged_entry_used (*state, NULL));
}

static void
writable_by_others (const struct fixture *f, const char *entry)
{
  (void)f;
  assert_int_equal (chmod (entry, 0622), 0);
}

static void
test_entry_writable_by_others_ignored (void **state)
{
  assert_false (forged_entry_used (*state, writable_by_others));
}

static void
owned_by_nobody (const struct fixture *f, const char *entry)
{
  (void)f;
  assert_int_equal (chown (entry, 65534, 65534), 0);
}

static void
test_entry_of_another_user_ignored (void **state)
{
  if (geteuid () != 0)
    skip ();
  assert_false (forged_entry_used (*state, owned_by_nobody));
}

static void
symlink_to_it (const struct fixture *f, const char *entry)
{
  cleanup_free char *aside = xasprintf ("%s/aside", f->dir);
  assert_int_equal (rename (entry, aside), 0);
  assert_int_equal (symlink (aside, entry), 0);
}

static void
test_entry_through_symlink_ignored (void **state)
{
  assert_false (forged_entry_used (*state, symlink_to_it));
}

static void
directory_writable_by_others (const struct fixture *f, const char *entry)
{
  (void)entry;
  assert_int_equal (chmod (f->cache, 0733), 0);
}

static void
test_directory_writable_by_others_ignored (void **state)
{
  assert_false (forged_entry_used (*state, directory_writable_by_others));
}

/* A file where the cache's writer once put its temporary file (the
 * entry's name and the writer's pid; a moat killed while writing left
 * one): the entry is still written, and read. */
static void
test_leftover_temporary_not_in_the_way (void **state)
{
  struct fixture *f = *state;
  cleanup_free char *text = long_config (10, "198.51.100.7/32");
  cleanup_free char *entry
      = xasprintf ("%s/config-%016" PRIx64 ".cache", f->cache,
                   hash64_words (f->config, strlen (f->config)));
  cleanup_free char *leftover = xasprintf ("%s.%d", entry, (int)getpid ());
  cleanup_profile struct profile *first = NULL, *hit = NULL;
  struct stat st, again;

  write_text (f->config, text);
  assert_int_equal (mkdir (f->cache, 0700), 0);
  write_text (leftover, "half an entry");
  first = load_cached (f);
  assert_int_equal (stat (entry, &st), 0);
  hit = load_cached (f);
  assert_int_equal (stat (entry, &again), 0);
  assert_int_equal (st.st_ino, again.st_ino); /* a hit: not rewritten */
  assert_same_profile (first, hit);
}

static void
second_link (const struct fixture *f, const char *entry)
{
  cleanup_free char *other = xasprintf ("%s/other-link", f->dir);
  assert_int_equal (link (entry, other), 0);
}

static void
test_entry_with_two_links_ignored (void **state)
{
  assert_false (forged_entry_used (*state, second_link));
}

/* Flip the bits of MASK in the byte at OFFSET (from the end where
 * negative) of the entry. */
static void
flip_byte (const char *entry, off_t offset, uint8_t mask)
{
  cleanup_close int fd = open (entry, O_RDWR | O_CLOEXEC);
  struct stat st;
  uint8_t b;

  assert_true (fd >= 0);
  assert_int_equal (fstat (fd, &st), 0);
  if (offset < 0)
    offset += st.st_size;
  assert_int_equal (pread (fd, &b, 1, offset), 1);
  b ^= mask;
  assert_int_equal (pwrite (fd, &b, 1, offset), 1);
}

/* The forged list's one entry is the entry's last bytes: its port. */
static void
list_entry_changed (const struct fixture *f, const char *entry)
{
  (void)f;
  flip_byte (entry, -1, 0x01);
}

static void
test_entry_with_changed_list_ignored (void **state)
{
  assert_false (forged_entry_used (*state, list_entry_changed));
}

/* The build stamp follows the magic (8 bytes): "moat BUILD-ID". */
static void
other_build (const struct fixture *f, const char *entry)
{
  (void)f;
  flip_byte (entry, 8 + 5, 0x01);
}

static void
test_entry_of_another_build_ignored (void **state)
{
  assert_false (forged_entry_used (*state, other_build));
}

/* The config without its lists, as kept in the entry (after the copy of
 * the text): its pids limit 77 made 76. */
static void
reduced_changed (const struct fixture *f, const char *entry)
{
  cleanup_free char *buf = NULL;
  size_t len = 0;
  const char *at = NULL;

  (void)f;
  assert_int_equal (read_file_at (AT_FDCWD, entry, 1 << 24, &buf, &len), 0);
  for (const char *p = buf;
       (p = memmem (p, len - (size_t)(p - buf), "\"pids\":77", 9)) != NULL; p++)
    at = p;
  assert_non_null (at);
  flip_byte (entry, at - buf + 8, 0x01); /* '7' -> '6' */
}

static void
test_entry_with_changed_settings_ignored (void **state)
{
  cleanup_profile struct profile *p = load_forged (*state, reduced_changed);

  assert_int_equal (p->pids_limit, 77);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_hit_gives_what_parsing_gives, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_leftover_temporary_not_in_the_way,
                                     setup, teardown),
    cmocka_unit_test_setup_teardown (test_changed_config_not_stale, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_digests_per_profile, setup, teardown),
    cmocka_unit_test_setup_teardown (test_forged_entry_shows, setup, teardown),
    cmocka_unit_test_setup_teardown (test_entry_writable_by_others_ignored,
                                     setup, teardown),
    cmocka_unit_test_setup_teardown (test_entry_of_another_user_ignored, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_entry_through_symlink_ignored, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_directory_writable_by_others_ignored,
                                     setup, teardown),
    cmocka_unit_test_setup_teardown (test_entry_with_two_links_ignored, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_entry_with_changed_list_ignored,
                                     setup, teardown),
    cmocka_unit_test_setup_teardown (test_entry_of_another_build_ignored, setup,
                                     teardown),
    cmocka_unit_test_setup_teardown (test_entry_with_changed_settings_ignored,
                                     setup, teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
