/* The egress guard's nameservers: read once, at create, from the
 * resolv.conf the container will see. That is the engine's bind of
 * /etc/resolv.conf when config.json has one (Docker, Podman, containerd
 * and CRI-O all write one per container), else the rootfs's own
 * /etc/resolv.conf, resolved inside the rootfs. Nothing the container
 * does later changes what its guard lets through. */
#include "netguard_dns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "init/linux.h"
#include "../lib/util.h"

/* resolv.conf is a few lines; more is not a resolv.conf. */
#define RESOLV_CONF_MAX (64 * 1024)

/* "/etc/resolv.conf", allowing repeated and trailing slashes. */
static bool
is_resolv_conf (const char *dest)
{
  static const char *const parts[] = { "etc", "resolv.conf" };
  const char *p = dest;

  if (p == NULL)
    return false;
  for (size_t i = 0; i < 2; i++)
    {
      size_t len = strlen (parts[i]);
      while (*p == '/')
        p++;
      if (strncmp (p, parts[i], len) != 0 || (p[len] && p[len] != '/'))
        return false;
      p += len;
    }
  while (*p == '/')
    p++;
  return *p == '\0';
}

/* Read a regular file through an O_PATH fd (a FIFO or a device named
 * resolv.conf must not block or touch anything): reopened through
 * /proc/self/fd, which gives the same inode. Not a regular file: *ret
 * stays NULL. */
static int
read_regular (int path_fd, char **ret)
{
  cleanup_free char *proc = xasprintf ("/proc/self/fd/%d", path_fd);
  struct stat st;
  size_t len;

  *ret = NULL;
  if (fstat (path_fd, &st) < 0)
    return -errno;
  if (!S_ISREG (st.st_mode))
    return 0;
  return read_file_at (AT_FDCWD, proc, RESOLV_CONF_MAX, ret, &len);
}

int
netguard_parse_nameservers (const char *text, struct cidr *ret, size_t max,
                            size_t *ret_n)
{
  size_t n = 0;

  *ret_n = 0;
  for (const char *line = text; line && *line && n < max;)
    {
      const char *end = strchr (line, '\n');
      size_t len = end ? (size_t)(end - line) : strlen (line);
      char buf[128], word[16], addr[INET6_ADDRSTRLEN + 1];
      struct cidr c;
      char *pct;

      if (len < sizeof (buf))
        {
          memcpy (buf, line, len);
          buf[len] = '\0';
          /* "nameserver ADDR", as glibc and musl read it; an IPv6
           * link-local address may carry "%scope". */
          if (sscanf (buf, " %15s %46s", word, addr) == 2
              && strcmp (word, "nameserver") == 0)
            {
              if ((pct = strchr (addr, '%')))
                *pct = '\0';
              if (cidr_parse (addr, &c) == 0
                  && c.prefix == (c.family == AF_INET ? 32 : 128))
                ret[n++] = c;
            }
        }
      line = end ? end + 1 : NULL;
    }
  *ret_n = n;
  return 0;
}

int
netguard_nameservers (const struct spec *s, const char *bundle,
                      const char *rootfs, struct cidr ret[NETGUARD_MAX_DNS],
                      size_t *ret_n, struct moat_error **err)
{
  const struct spec_mount *bind = NULL;
  cleanup_close int path_fd = -1;
  cleanup_free char *text = NULL;
  int r;

  *ret_n = 0;
  /* The last mount on /etc/resolv.conf is the one the container sees. */
  for (size_t i = 0; i < s->n_mounts; i++)
    if (is_resolv_conf (s->mounts[i].destination))
      bind = mount_is_bind (&s->mounts[i]) && s->mounts[i].source
                 ? &s->mounts[i]
                 : NULL;
  if (bind)
    {
      cleanup_free char *src = bind->source[0] == '/'
                                   ? xstrdup (bind->source)
                                   : xasprintf ("%s/%s", bundle, bind->source);
      path_fd = open (src, O_PATH | O_CLOEXEC);
      if (path_fd < 0 && errno != ENOENT)
        return moat_fail (err, errno, "resolv.conf bind source %s", src);
    }
  else
    {
      cleanup_close int rootfd
          = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
      cleanup_error struct moat_error *missing = NULL;
      if (rootfd < 0)
        return moat_fail (err, errno, "rootfs %s", rootfs);
      /* Inside the rootfs: an image's absolute symlink stays in it. */
      if (rootfs_open_in (rootfd, "etc/resolv.conf", false, false, &path_fd,
                          &missing)
          < 0)
        path_fd = -1;
    }
  if (path_fd < 0)
    return 0;
  r = read_regular (path_fd, &text);
  if (r < 0)
    return moat_fail (err, -r, "reading the container's resolv.conf");
  if (text)
    netguard_parse_nameservers (text, ret, NETGUARD_MAX_DNS, ret_n);
  return 0;
}
