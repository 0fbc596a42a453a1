/* moat session create, list, rm and the reap of expired sessions (see
 * session.h). A session's directory ROOT/.session/ID holds its bundle
 * (config.json), its record (session.json: what list shows and what exec
 * needs), the file `used` whose mtime is the last exec's, and `lock`:
 * create holds it exclusively until the container runs, each exec shares
 * it for as long as it runs, and the reap removes only what it can lock
 * exclusively, so no session is removed under a running exec. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../oci/json.h"
#include "../runtime/container_internal.h"
#include "../runtime/statedir.h"
#include "image.h"
#include "sandbox_internal.h"
#include "session_internal.h"
#include "../lib/util.h"

/* A session dir with no lock file yet, or no record, is a crashed create
 * after this long. */
#define SESSION_UNLOCKED_STALE_S 60

int64_t
session_now_unix_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
jw_limits (struct json_writer *w, const struct sandbox_limits *lim)
{
  jw_key (w, "memory_bytes");
  jw_int (w, lim->memory);
  jw_key (w, "pids");
  jw_int (w, lim->pids);
  jw_key (w, "cpu_quota");
  jw_int (w, lim->cpu_quota);
  jw_key (w, "cpu_period");
  jw_uint (w, lim->cpu_period);
}

static char *
meta_json (const struct session_meta *m)
{
  struct json_writer *w = json_writer_new (false);

  jw_object_begin (w);
  jw_key (w, "id");
  jw_string (w, m->id);
  jw_key (w, "created_ms");
  jw_int (w, m->created_ms);
  jw_key (w, "idle_timeout_ms");
  jw_int (w, m->idle_timeout_ms);
  jw_key (w, "max_lifetime_ms");
  jw_int (w, m->max_lifetime_ms);
  jw_key (w, "image");
  jw_string (w, m->image);
  jw_key (w, "rootfs");
  jw_string (w, m->rootfs);
  jw_key (w, "workdir");
  jw_string (w, m->workdir);
  jw_key (w, "uid");
  jw_int (w, m->uid);
  jw_key (w, "gid");
  jw_int (w, m->gid);
  jw_limits (w, &m->lim);
  jw_object_end (w);
  return json_writer_finish (w);
}

static int64_t
meta_int (const json_node *root, const char *key)
{
  int64_t v = -1;
  json_node *n = json_get (root, key);
  if (n == NULL || json_int64 (n, &v) < 0)
    return -1;
  return v;
}

static char *
meta_str (const json_node *root, const char *key)
{
  const char *s = json_string (json_get (root, key));
  return s ? xstrdup (s) : NULL;
}

void
session_meta_clear (struct session_meta *m)
{
  free (m->id);
  free (m->image);
  free (m->rootfs);
  free (m->workdir);
  memset (m, 0, sizeof (*m));
}

int
session_meta_load (int sdfd, struct session_meta *ret, struct moat_error **err)
{
  cleanup_free char *text = NULL;
  json_node *root = NULL;
  struct stat st;
  size_t len;
  int r;

  r = read_file_at (sdfd, "session.json", 1 << 16, &text, &len);
  if (r < 0)
    return moat_fail (err, -r, "reading the session's record");
  if (json_parse (text, len, 1 << 16, &root, err) < 0)
    return moat_error_wrap (err, "the session's record");
  memset (ret, 0, sizeof (*ret));
  ret->id = meta_str (root, "id");
  ret->image = meta_str (root, "image");
  ret->rootfs = meta_str (root, "rootfs");
  ret->workdir = meta_str (root, "workdir");
  ret->uid = meta_int (root, "uid") > 0 ? meta_int (root, "uid") : 0;
  ret->gid = meta_int (root, "gid") > 0 ? meta_int (root, "gid") : 0;
  ret->created_ms = meta_int (root, "created_ms");
  ret->idle_timeout_ms = meta_int (root, "idle_timeout_ms");
  ret->max_lifetime_ms = meta_int (root, "max_lifetime_ms");
  ret->lim.memory = meta_int (root, "memory_bytes");
  ret->lim.pids = meta_int (root, "pids");
  ret->lim.cpu_quota = meta_int (root, "cpu_quota");
  ret->lim.cpu_period = (uint64_t)meta_int (root, "cpu_period");
  json_free (root);
  ret->used_ms = ret->created_ms;
  if (fstatat (sdfd, "used", &st, AT_SYMLINK_NOFOLLOW) == 0)
    ret->used_ms
        = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
  return 0;
}

void
session_touch_used (int sdfd)
{
  cleanup_close int fd = -1;

  /* One call where the file is there (create made it). */
  if (utimensat (sdfd, "used", NULL, AT_SYMLINK_NOFOLLOW) == 0)
    return;
  fd = openat (sdfd, "used", O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0)
    futimens (fd, NULL);
}

int
session_open (const struct moat_globals *g, const char *id, int *ret_sdfd,
              struct moat_error **err)
{
  cleanup_close int dirfd = -1;
  int fd;

  if (container_id_check (id, err) < 0)
    return -1;
  if (statedir_subdir_open (g->root, ".session", 0, &dirfd, err) < 0)
    return -1;
  fd = dirfd < 0 ? -1
                 : openat (dirfd, id,
                           O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && (dirfd < 0 || errno == ENOENT))
    return moat_fail (err, ENOENT, "no such session");
  if (fd < 0)
    return moat_fail (err, errno, "%s/.session/%s", g->root, id);
  *ret_sdfd = fd;
  return 0;
}

static void
session_remove_at (const struct moat_globals *g, int dirfd, const char *id)
{
  struct moat_globals q = *g;
  cleanup_error struct moat_error *e = NULL;

  q.audit = NULL;
  container_delete (&q, id, true, &e);
  remove_tree_at (dirfd, id);
}

int
session_rm (const struct moat_globals *g, const char *id,
            struct moat_error **err)
{
  cleanup_close int dirfd = -1;

  session_reap_expired (g);
  if (container_id_check (id, err) < 0)
    return -1;
  if (statedir_subdir_open (g->root, ".session", 0, &dirfd, err) < 0)
    return -1;
  if (dirfd < 0)
    return 0;
  /* Only a session's own container: not any container the id names. */
  if (faccessat (dirfd, id, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
    return 0;
  session_remove_at (g, dirfd, id);
  return 0;
}

const char *
session_expiry (const struct session_meta *m, const struct container_state *st,
                int64_t now)
{
  if (st == NULL || !container_init_alive (st))
    return "its container is gone";
  if (m->max_lifetime_ms > 0 && now - m->created_ms > m->max_lifetime_ms)
    return "past its lifetime";
  if (m->idle_timeout_ms > 0 && now - m->used_ms > m->idle_timeout_ms)
    return "idle past its timeout";
  return NULL;
}

/* Why a session should go, or NULL. */
static const char *
session_expired (const struct moat_globals *g, int sdfd, const char *id,
                 int64_t now)
{
  struct moat_globals q = *g;
  struct session_meta m;
  cleanup_state struct container_state *st = NULL;
  cleanup_close int cdirfd = -1;
  cleanup_error struct moat_error *e = NULL;
  struct stat sb;
  const char *why = NULL;

  if (session_meta_load (sdfd, &m, &e) < 0)
    return fstat (sdfd, &sb) == 0
                   && time (NULL) - sb.st_mtime > SESSION_UNLOCKED_STALE_S
               ? "no record"
               : NULL;
  q.audit = NULL;
  if (container_load (&q, id, false, NULL, &cdirfd, &st, &e) < 0)
    st = NULL;
  why = session_expiry (&m, st, now);
  session_meta_clear (&m);
  return why;
}

/* One session of dirfd (ROOT/.session): removed if it is past its limits
 * or its container died, or if it has no lock and is stale; left if
 * anyone holds it (being created, an exec running). */
static void
reap_if_expired (const struct moat_globals *g, int dirfd, const char *id,
                 int64_t now)
{
  cleanup_close int sdfd = -1;
  cleanup_close int lockfd = -1;
  struct stat sb;

  if (id[0] == '.' || container_id_check (id, NULL) < 0)
    return;
  sdfd = openat (dirfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sdfd < 0)
    return;
  lockfd = openat (sdfd, "lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (lockfd < 0)
    {
      if (fstat (sdfd, &sb) == 0
          && time (NULL) - sb.st_mtime > SESSION_UNLOCKED_STALE_S)
        session_remove_at (g, dirfd, id);
      return;
    }
  if (flock (lockfd, LOCK_EX | LOCK_NB) < 0)
    return;
  if (session_expired (g, sdfd, id, now))
    session_remove_at (g, dirfd, id);
}

static int
sessions_dir_open (const struct moat_globals *g)
{
  int fd = -1;
  return statedir_subdir_open (g->root, ".session", 0, &fd, NULL) < 0 ? -1 : fd;
}

void
session_reap_expired (const struct moat_globals *g)
{
  cleanup_close int dirfd = sessions_dir_open (g);
  int64_t now = session_now_unix_ms ();
  DIR *d;
  struct dirent *de;
  int fd;

  if (dirfd < 0)
    return;
  fd = dup (dirfd);
  d = fd >= 0 ? fdopendir (fd) : NULL;
  if (d == NULL)
    return;
  while ((de = readdir (d)))
    reap_if_expired (g, dirfd, de->d_name, now);
  closedir (d);
}

void
session_reap_one (const struct moat_globals *g, const char *id)
{
  cleanup_close int dirfd = sessions_dir_open (g);

  if (dirfd >= 0)
    reap_if_expired (g, dirfd, id, session_now_unix_ms ());
}

/* The container: made from the bundle with moat's stdio on /dev/null (the
 * init keeps what it gets, and a caller reading our stdout waits for EOF),
 * its init reaping, then started. */
static int
session_container_up (const struct moat_globals *g, const char *id,
                      const char *bundle, struct moat_error **err)
{
  struct create_opts co = { .id = id, .bundle = bundle, .init_reaps = true };
  cleanup_close int devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  int saved[3] = { -1, -1, -1 };
  int r;

  if (devnull < 0)
    return moat_fail (err, errno, "/dev/null");
  r = sandbox_stdio_swap_in (devnull, devnull, devnull, saved, err);
  if (r == 0)
    r = container_create (g, &co, err);
  sandbox_stdio_swap_out (saved);
  if (r == 0)
    r = container_start (g, id, err);
  return r;
}

static void
print_created (const struct session_create_opts *o, const char *id, FILE *out)
{
  if (o->json)
    {
      struct json_writer *w = json_writer_new (false);
      cleanup_free char *text = NULL;
      jw_object_begin (w);
      jw_key (w, "id");
      jw_string (w, id);
      jw_object_end (w);
      text = json_writer_finish (w);
      fprintf (out, "%s\n", text);
    }
  else
    fprintf (out, "%s\n", id);
  fflush (out);
}

/* The session outlives this process and its lock on the image's cache
 * entry: prune must still see that the session holds it. */
static int
session_hold_image (const struct moat_globals *g, const char *digest,
                    const char *id, const char *dir, struct moat_error **err)
{
  cleanup_free char *holder = realpath (dir, NULL);

  if (holder == NULL)
    return moat_fail (err, errno, "session %s", dir);
  return image_hold (g->operator_config->image_cache, digest, id, holder, err);
}

int
session_create (const struct moat_globals *g,
                const struct session_create_opts *o, FILE *out,
                struct moat_error **err)
{
  char *init_argv[] = { "moat-session-init", NULL };
  struct override_list local_ov = { 0 };
  struct override_list *ov = g->audit ? g->audit->overrides : &local_ov;
  struct sandbox_opts sb = o->sb;
  struct sandbox_prep prep;
  struct session_meta m = { 0 };
  struct moat_globals sg = *g;
  cleanup_close int dirfd = -1;
  cleanup_close int lockfd = -1;
  cleanup_close int sdfd = -1;
  cleanup_free char *bundle = NULL;
  cleanup_free char *meta = NULL;
  char id[32];
  int r;

  session_reap_expired (g);
  sb.argv = init_argv;
  r = sandbox_prepare (g, &sb, "session create", ov, &prep, err);
  if (r == 0)
    r = sandbox_dir_open (g, ".session", &dirfd, err);
  if (r == 0)
    r = sandbox_bundle_make (dirfd, "session", id, &lockfd, &sdfd, err);
  if (r < 0)
    {
      sandbox_prep_clear (&prep);
      override_list_clear (&local_ov);
      return r;
    }
  bundle = xasprintf ("%s/.session/%s", g->root, id);
  if (prep.digest && session_hold_image (g, prep.digest, id, bundle, err) < 0)
    {
      session_remove_at (g, dirfd, id);
      sandbox_prep_clear (&prep);
      override_list_clear (&local_ov);
      return -1;
    }
  m.id = id;
  if (o->id_buf)
    snprintf (o->id_buf, 32, "%s", id);
  m.created_ms = session_now_unix_ms ();
  m.idle_timeout_ms
      = o->idle_timeout_ms > 0 ? o->idle_timeout_ms : SESSION_IDLE_TIMEOUT_MS;
  m.max_lifetime_ms
      = o->max_lifetime_ms > 0 ? o->max_lifetime_ms : SESSION_MAX_LIFETIME_MS;
  m.image = (char *)o->sb.image; /* borrowed: m is not cleared */
  m.rootfs = prep.rootfs;
  m.workdir = prep.workdir;
  m.uid = prep.uid;
  m.gid = prep.gid;
  m.lim = prep.lim;
  meta = meta_json (&m);
  sg.operator_config = prep.operator_config;
  r = write_file_atomic (sdfd, "config.json", prep.config, strlen (prep.config),
                         0600);
  if (r == 0)
    r = write_file_atomic (sdfd, "session.json", meta, strlen (meta), 0600);
  if (r < 0)
    r = moat_fail (err, -r, "writing the session's bundle");
  if (r == 0)
    r = session_container_up (&sg, id, bundle, err);
  if (r < 0)
    session_remove_at (g, dirfd, id);
  else
    print_created (o, id, out);
  sandbox_prep_clear (&prep);
  override_list_clear (&local_ov);
  return r;
}

static void
list_one (struct json_writer *w, FILE *out, const struct session_meta *m,
          int64_t now)
{
  int64_t age = (now - m->created_ms) / 1000;
  int64_t idle = (now - m->used_ms) / 1000;

  if (w == NULL)
    {
      fprintf (out, "%-26s %8" PRId64 " %8" PRId64 " %s\n", m->id, age, idle,
               m->image    ? m->image
               : m->rootfs ? m->rootfs
                           : "-");
      return;
    }
  jw_object_begin (w);
  jw_key (w, "id");
  jw_string (w, m->id);
  jw_key (w, "age_s");
  jw_int (w, age);
  jw_key (w, "idle_s");
  jw_int (w, idle);
  jw_key (w, "idle_timeout_s");
  jw_int (w, m->idle_timeout_ms / 1000);
  jw_key (w, "max_lifetime_s");
  jw_int (w, m->max_lifetime_ms / 1000);
  jw_key (w, "image");
  jw_string (w, m->image);
  jw_key (w, "rootfs");
  jw_string (w, m->rootfs);
  jw_key (w, "workdir");
  jw_string (w, m->workdir);
  jw_key (w, "limits");
  jw_object_begin (w);
  jw_limits (w, &m->lim);
  jw_object_end (w);
  jw_object_end (w);
}

static int
names_cmp (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

int
session_list (const struct moat_globals *g, bool json, FILE *out,
              struct moat_error **err)
{
  cleanup_close int dirfd = -1;
  cleanup_strv char **names = NULL;
  struct json_writer *w = json ? json_writer_new (false) : NULL;
  int64_t now = session_now_unix_ms ();
  DIR *d;
  struct dirent *de;

  (void)err;
  session_reap_expired (g);
  dirfd = sessions_dir_open (g);
  d = dirfd >= 0 ? fdopendir (dup (dirfd)) : NULL;
  while (d && (de = readdir (d)))
    if (de->d_name[0] != '.' && container_id_check (de->d_name, NULL) == 0)
      strv_append (&names, de->d_name);
  if (d)
    closedir (d);
  if (names)
    qsort (names, strv_len (names), sizeof (char *), names_cmp);
  if (w)
    jw_array_begin (w);
  else
    fprintf (out, "%-26s %8s %8s %s\n", "ID", "AGE_S", "IDLE_S", "IMAGE");
  for (size_t i = 0; names && names[i]; i++)
    {
      cleanup_close int sdfd = openat (
          dirfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      cleanup_error struct moat_error *e = NULL;
      struct session_meta m;
      if (sdfd < 0 || session_meta_load (sdfd, &m, &e) < 0)
        continue; /* being created */
      list_one (w, out, &m, now);
      session_meta_clear (&m);
    }
  if (w)
    {
      cleanup_free char *text = NULL;
      jw_array_end (w);
      text = json_writer_finish (w);
      fprintf (out, "%s\n", text);
    }
  return 0;
}
