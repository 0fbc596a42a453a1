/* An image's User ("1000", "1000:1000", "app", "app:staff") as numeric
 * ids, names looked up in the image's own /etc/passwd and /etc/group: a
 * name means what the image says, not what the host says. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "image.h"
#include "../lib/util.h"

#define IMAGE_ID_FILE_MAX (1u << 20)

/* "123" -> 123; anything else -> -1. */
static int64_t
numeric_id (const char *s)
{
  char *end;
  long long v;

  if (*s < '0' || *s > '9')
    return -1;
  errno = 0;
  v = strtoll (s, &end, 10);
  if (errno || *end || v > 0xfffffffeLL)
    return -1;
  return v;
}

/* The line of name in rootfs/file (passwd or group): *ret_id its third
 * field, *ret_gid (passwd only, may be NULL) its fourth. */
static int
lookup_name (int rootfd, const char *file, const char *name, int64_t *ret_id,
             int64_t *ret_gid, struct moat_error **err)
{
  struct open_how how = { .flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC,
                          .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
  cleanup_close int fd
      = (int)syscall (SYS_openat2, rootfd, file, &how, sizeof (how));
  cleanup_free char *text = NULL;
  size_t len, nlen = strlen (name);
  char *line, *save = NULL;

  if (fd < 0 || read_fd_all (fd, IMAGE_ID_FILE_MAX, &text, &len) < 0)
    return moat_fail (err, fd < 0 ? errno : 0, "image: User %s: %s", name,
                      file);
  for (line = strtok_r (text, "\n", &save); line;
       line = strtok_r (NULL, "\n", &save))
    {
      char *f[4] = { 0 };
      char *p = line;
      if (strncmp (line, name, nlen) != 0 || line[nlen] != ':')
        continue;
      for (int i = 0; i < 4 && p; i++)
        {
          f[i] = p;
          p = strchr (p, ':');
          if (p)
            *p++ = '\0';
        }
      if (f[2] == NULL || (*ret_id = numeric_id (f[2])) < 0)
        break;
      if (ret_gid && (f[3] == NULL || (*ret_gid = numeric_id (f[3])) < 0))
        break;
      return 0;
    }
  return moat_fail (err, 0, "image: User %s: not in the image's %s", name,
                    file);
}

int
image_user_resolve (const char *rootfs, const char *user, int64_t *ret_uid,
                    int64_t *ret_gid, struct moat_error **err)
{
  cleanup_free char *u = xstrdup (user);
  char *group = strchr (u, ':');
  cleanup_close int rootfd = open (rootfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int64_t uid, gid = -1;

  if (group)
    *group++ = '\0';
  if (rootfd < 0)
    return moat_fail (err, errno, "image: %s", rootfs);
  uid = numeric_id (u);
  if (uid < 0 && lookup_name (rootfd, "/etc/passwd", u, &uid, &gid, err) < 0)
    return -1;
  if (group && *group)
    {
      gid = numeric_id (group);
      if (gid < 0
          && lookup_name (rootfd, "/etc/group", group, &gid, NULL, err) < 0)
        return -1;
    }
  *ret_uid = uid;
  *ret_gid = gid >= 0 ? gid : uid;
  return 0;
}
