/* See bpf.h. */
#include "bpf.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../lib/util.h"

long
bpf_sys (int cmd, union bpf_attr *attr)
{
  return syscall (__NR_bpf, cmd, attr, sizeof (*attr));
}

/* Before 5.11 BPF memory was charged to RLIMIT_MEMLOCK; raise the soft
 * limit to the hard one. Can go when the baseline kernel is 5.11. */
static void
raise_memlock (void)
{
  struct rlimit rl;
  if (getrlimit (RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur < rl.rlim_max)
    {
      rl.rlim_cur = rl.rlim_max;
      (void)setrlimit (RLIMIT_MEMLOCK, &rl);
    }
}

/* A command that makes an object charged to RLIMIT_MEMLOCK before 5.11:
 * on EPERM, once more with the limit raised. */
static long
bpf_sys_charged (int cmd, union bpf_attr *attr)
{
  long r = bpf_sys (cmd, attr);
  if (r < 0 && errno == EPERM)
    {
      raise_memlock ();
      r = bpf_sys (cmd, attr);
    }
  return r;
}

int
bpf_prog_load (enum bpf_prog_type type, enum bpf_attach_type expected,
               const char *name, const struct bpf_insn *insns, size_t n,
               int *ret_fd, struct moat_error **err)
{
  union bpf_attr attr;
  long fd;
  int saved;

  memset (&attr, 0, sizeof (attr));
  attr.prog_type = type;
  attr.expected_attach_type = expected;
  attr.insns = (uint64_t)(uintptr_t)insns;
  attr.insn_cnt = (uint32_t)n;
  attr.license = (uint64_t)(uintptr_t) "GPL";
  strncpy (attr.prog_name, name, sizeof (attr.prog_name) - 1);

  fd = bpf_sys_charged (BPF_PROG_LOAD, &attr);
  if (fd < 0)
    {
      /* Load once more with the verifier's log, only to explain. */
      const size_t log_size = 64 * 1024;
      cleanup_free char *log = xcalloc (1, log_size);
      size_t len;

      saved = errno;
      attr.log_level = 1;
      attr.log_buf = (uint64_t)(uintptr_t)log;
      attr.log_size = log_size;
      fd = bpf_sys (BPF_PROG_LOAD, &attr);
      if (fd >= 0)
        {
          *ret_fd = (int)fd;
          return 0;
        }
      len = strnlen (log, log_size);
      while (len > 0 && log[len - 1] == '\n')
        log[--len] = '\0';
      /* The verifier's reason is at the end; errors are one line. */
      for (char *p = log; *p; p++)
        if (*p == '\n')
          *p = ' ';
      return moat_fail (err, saved, "loading BPF program %s (verifier: %s)",
                        name, len > 200 ? log + len - 200 : log);
    }
  *ret_fd = (int)fd; /* the kernel makes program fds O_CLOEXEC */
  return 0;
}

/* BPF_OBJ_GET_INFO_BY_FD into INFO (zeroed first) of LEN bytes. */
static int
obj_info (int fd, void *info, uint32_t len)
{
  union bpf_attr attr;

  memset (&attr, 0, sizeof (attr));
  attr.info.bpf_fd = (uint32_t)fd;
  attr.info.info_len = len;
  attr.info.info = (uint64_t)(uintptr_t)info;
  return bpf_sys (BPF_OBJ_GET_INFO_BY_FD, &attr) < 0 ? -errno : 0;
}

static int
cgroup_op (int cmd, int cgroup_fd, int prog_fd, enum bpf_attach_type hook)
{
  union bpf_attr attr;
  memset (&attr, 0, sizeof (attr));
  attr.target_fd = (uint32_t)cgroup_fd;
  attr.attach_bpf_fd = (uint32_t)prog_fd;
  attr.attach_type = hook;
  if (cmd == BPF_PROG_ATTACH)
    attr.attach_flags = BPF_F_ALLOW_MULTI;
  return bpf_sys (cmd, &attr) < 0 ? -errno : 0;
}

int
bpf_cgroup_attach (int cgroup_fd, int prog_fd, enum bpf_attach_type hook)
{
  return cgroup_op (BPF_PROG_ATTACH, cgroup_fd, prog_fd, hook);
}

int
bpf_cgroup_detach (int cgroup_fd, int prog_fd, enum bpf_attach_type hook)
{
  return cgroup_op (BPF_PROG_DETACH, cgroup_fd, prog_fd, hook);
}

int
bpf_cgroup_detach_id (int cgroup_fd, uint32_t id, enum bpf_attach_type hook)
{
  union bpf_attr attr;
  cleanup_close int prog_fd = -1;

  memset (&attr, 0, sizeof (attr));
  attr.prog_id = id;
  prog_fd = (int)bpf_sys (BPF_PROG_GET_FD_BY_ID, &attr);
  if (prog_fd < 0)
    return errno == ENOENT ? 0 : -errno;
  return bpf_cgroup_detach (cgroup_fd, prog_fd, hook);
}

int
bpf_cgroup_query (int cgroup_fd, enum bpf_attach_type hook, uint32_t *ids,
                  uint32_t *n_ids)
{
  union bpf_attr attr;
  memset (&attr, 0, sizeof (attr));
  attr.query.target_fd = (uint32_t)cgroup_fd;
  attr.query.attach_type = hook;
  attr.query.prog_ids = (uint64_t)(uintptr_t)ids;
  attr.query.prog_cnt = *n_ids;
  if (bpf_sys (BPF_PROG_QUERY, &attr) < 0)
    return -errno;
  *n_ids = attr.query.prog_cnt;
  return 0;
}

int
bpf_map_create (enum bpf_map_type type, uint32_t key_size, uint32_t value_size,
                uint32_t max_entries, uint32_t flags, const char *name,
                int *ret_fd, struct moat_error **err)
{
  union bpf_attr attr;
  long fd;

  memset (&attr, 0, sizeof (attr));
  attr.map_type = type;
  attr.key_size = key_size;
  attr.value_size = value_size;
  attr.max_entries = max_entries;
  attr.map_flags = flags;
  strncpy (attr.map_name, name, sizeof (attr.map_name) - 1);
  fd = bpf_sys_charged (BPF_MAP_CREATE, &attr);
  if (fd < 0)
    return moat_fail (err, errno, "creating BPF map %s (%u entries)", name,
                      max_entries);
  *ret_fd = (int)fd; /* the kernel makes map fds O_CLOEXEC */
  return 0;
}

static int
map_elem_op (int cmd, int map_fd, const void *key, void *value_or_next)
{
  union bpf_attr attr;

  memset (&attr, 0, sizeof (attr));
  attr.map_fd = (uint32_t)map_fd;
  attr.key = (uint64_t)(uintptr_t)key;
  if (cmd == BPF_MAP_GET_NEXT_KEY)
    attr.next_key = (uint64_t)(uintptr_t)value_or_next;
  else
    attr.value = (uint64_t)(uintptr_t)value_or_next;
  attr.flags = BPF_ANY;
  return bpf_sys (cmd, &attr) < 0 ? -errno : 0;
}

int
bpf_map_lookup (int map_fd, const void *key, void *value)
{
  return map_elem_op (BPF_MAP_LOOKUP_ELEM, map_fd, key, value);
}

int
bpf_map_update (int map_fd, const void *key, const void *value)
{
  return map_elem_op (BPF_MAP_UPDATE_ELEM, map_fd, key, (void *)value);
}

int
bpf_map_next_key (int map_fd, const void *key, void *ret_next)
{
  return map_elem_op (BPF_MAP_GET_NEXT_KEY, map_fd, key, ret_next);
}

int
bpf_prog_maps_by_name (uint32_t prog_id, const char *const *names, int *ret_fds,
                       size_t n)
{
  union bpf_attr attr;
  struct bpf_prog_info info;
  uint32_t map_ids[16] = { 0 }; /* the kernel fills them; valgrind cannot
                                 * tell */
  cleanup_close int prog_fd = -1;
  size_t found = 0;

  for (size_t j = 0; j < n; j++)
    ret_fds[j] = -1;
  memset (&attr, 0, sizeof (attr));
  attr.prog_id = prog_id;
  prog_fd = (int)bpf_sys (BPF_PROG_GET_FD_BY_ID, &attr);
  if (prog_fd < 0)
    return -errno;
  memset (&info, 0, sizeof (info));
  info.nr_map_ids = sizeof (map_ids) / sizeof (map_ids[0]);
  info.map_ids = (uint64_t)(uintptr_t)map_ids;
  if (obj_info (prog_fd, &info, sizeof (info)) < 0)
    return -errno;
  for (uint32_t i = 0; i < info.nr_map_ids && i < 16 && found < n; i++)
    {
      struct bpf_map_info map;
      int map_fd;

      memset (&attr, 0, sizeof (attr));
      attr.map_id = map_ids[i];
      map_fd = (int)bpf_sys (BPF_MAP_GET_FD_BY_ID, &attr);
      if (map_fd < 0)
        continue;
      memset (&map, 0, sizeof (map));
      if (obj_info (map_fd, &map, sizeof (map)) == 0)
        for (size_t j = 0; j < n; j++)
          if (ret_fds[j] < 0
              && strncmp (map.name, names[j], sizeof (map.name)) == 0)
            {
              ret_fds[j] = map_fd;
              map_fd = -1;
              found++;
              break;
            }
      if (map_fd >= 0)
        close (map_fd);
    }
  if (found == n)
    return 0;
  for (size_t j = 0; j < n; j++)
    if (ret_fds[j] >= 0)
      {
        close (ret_fds[j]);
        ret_fds[j] = -1;
      }
  return -ENOENT;
}

int
bpf_map_freeze (int map_fd)
{
  union bpf_attr attr;

  memset (&attr, 0, sizeof (attr));
  attr.map_fd = (uint32_t)map_fd;
  return bpf_sys (BPF_MAP_FREEZE, &attr) < 0 ? -errno : 0;
}

int
bpf_obj_pin (int fd, const char *path)
{
  union bpf_attr attr;

  memset (&attr, 0, sizeof (attr));
  attr.pathname = (uint64_t)(uintptr_t)path;
  attr.bpf_fd = (uint32_t)fd;
  return bpf_sys (BPF_OBJ_PIN, &attr) < 0 ? -errno : 0;
}

int
bpf_obj_get (const char *path, int *ret_fd)
{
  union bpf_attr attr;
  long fd;

  memset (&attr, 0, sizeof (attr));
  attr.pathname = (uint64_t)(uintptr_t)path;
  fd = bpf_sys (BPF_OBJ_GET, &attr);
  if (fd < 0)
    return -errno;
  *ret_fd = (int)fd; /* the kernel makes these fds O_CLOEXEC */
  return 0;
}

int
bpf_map_value_size (int map_fd, uint32_t *ret)
{
  struct bpf_map_info info;
  int r;

  memset (&info, 0, sizeof (info));
  r = obj_info (map_fd, &info, sizeof (info));
  if (r == 0)
    *ret = info.value_size;
  return r;
}

int
bpf_map_delete (int map_fd, const void *key)
{
  union bpf_attr attr;

  memset (&attr, 0, sizeof (attr));
  attr.map_fd = (uint32_t)map_fd;
  attr.key = (uint64_t)(uintptr_t)key;
  return bpf_sys (BPF_MAP_DELETE_ELEM, &attr) < 0 ? -errno : 0;
}

int
bpf_prog_id (int prog_fd, uint32_t *ret)
{
  struct bpf_prog_info info;
  int r;

  memset (&info, 0, sizeof (info));
  r = obj_info (prog_fd, &info, sizeof (info));
  if (r == 0)
    *ret = info.id;
  return r;
}
