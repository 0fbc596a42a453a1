/* config.json as plain C structs. oci/config.c fills them from JSON (strict
 * types, unknown fields ignored); policy/profile.c hardens them; runtime/
 * executes exactly what they say. Every string and array is heap-owned and
 * released by spec_free(). String vectors are NULL-terminated (char **),
 * counted with strv_len(). Optional scalars carry a has_ flag. */
#ifndef MOAT_SPEC_H
#define MOAT_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct spec_kv
{
  char *key;
  char *value;
};

struct spec_user
{
  uint32_t uid;
  uint32_t gid;
  bool has_umask;
  uint32_t umask;
  uint32_t *additional_gids;
  size_t n_additional_gids;
};

/* Capability sets as bitmasks of CAP_* numbers (bit n = capability n). */
struct spec_caps
{
  bool present; /* process.capabilities was given */
  uint64_t bounding, effective, inheritable, permitted, ambient;
};

struct spec_rlimit
{
  int resource; /* RLIMIT_* number */
  char *type;   /* "RLIMIT_NOFILE", as written */
  uint64_t soft, hard;
};

struct spec_process
{
  bool terminal;
  bool has_console_size;
  uint32_t console_height, console_width;
  struct spec_user user;
  char **args; /* required, non-empty */
  char **env;
  char *cwd; /* required, absolute */
  struct spec_caps caps;
  struct spec_rlimit *rlimits;
  size_t n_rlimits;
  bool no_new_privileges;
  bool has_oom_score_adj;
  int oom_score_adj;
  char *apparmor_profile;
  char *selinux_label;
};

struct spec_mount
{
  char *destination; /* absolute path inside the container */
  char *type;        /* may be NULL (bind) */
  char *source;      /* may be NULL */
  char **options;
  /* Added by the profile (a scratch tmpfs), not asked by config.json:
   * dropped, and told, where the rootfs has no place for it. */
  bool profile_added;
};

struct spec_hook
{
  char *path; /* absolute */
  char **args;
  char **env;
  int timeout; /* seconds, 0 = none */
};

enum hook_kind
{
  HOOK_PRESTART,
  HOOK_CREATE_RUNTIME,
  HOOK_CREATE_CONTAINER,
  HOOK_START_CONTAINER,
  HOOK_POSTSTART,
  HOOK_POSTSTOP,
  HOOK__MAX
};

struct spec_hook_list
{
  struct spec_hook *v;
  size_t n;
};

enum ns_type
{
  NS_MOUNT,
  NS_PID,
  NS_NET,
  NS_IPC,
  NS_UTS,
  NS_USER,
  NS_CGROUP,
  NS_TIME,
  NS__MAX
};

struct spec_namespace
{
  bool present; /* listed in linux.namespaces */
  char *path;   /* join this one instead of creating (NULL: create) */
};

struct spec_idmap
{
  uint32_t container_id, host_id, size;
};

struct spec_device
{
  char *path;
  char type; /* 'c', 'b', 'u', 'p' */
  int64_t major, minor;
  bool has_file_mode;
  uint32_t file_mode;
  bool has_uid, has_gid;
  uint32_t uid, gid;
};

struct spec_device_rule
{
  bool allow;
  char type;            /* 'a', 'c', 'b' ('a' when absent) */
  int64_t major, minor; /* -1 = any */
  char access[4];       /* subset of "rwm", "" = rwm */
};

struct spec_memory
{
  bool has_limit, has_reservation, has_swap, has_swappiness;
  int64_t limit, reservation, swap; /* -1 = unlimited */
  uint64_t swappiness;
  bool disable_oom_killer;
};

struct spec_cpu
{
  bool has_shares, has_quota, has_period, has_realtime_runtime,
      has_realtime_period, has_idle, has_burst;
  uint64_t shares, period, realtime_period, burst;
  int64_t quota, realtime_runtime, idle;
  char *cpus; /* cpuset, may be NULL */
  char *mems;
};

/* linux.resources.hugepageLimits[]: the kernel's name of a page size
 * ("2MB", "1GB", "64KB"; checked, as it names a cgroup file) and bytes. */
struct spec_hugepage_limit
{
  char *page_size;
  uint64_t limit;
};

struct spec_resources
{
  struct spec_device_rule *devices;
  size_t n_devices;
  struct spec_memory memory;
  struct spec_cpu cpu;
  bool has_pids_limit;
  int64_t pids_limit; /* <= 0 = unlimited */
  bool has_blkio_weight;
  uint16_t blkio_weight;
  struct spec_kv *unified; /* cgroup v2 "file": "value" */
  size_t n_unified;
  struct spec_hugepage_limit *hugepage_limits;
  size_t n_hugepage_limits;
};

struct spec_seccomp_arg
{
  uint32_t index;
  uint64_t value, value_two;
  char *op; /* "SCMP_CMP_EQ" ... */
};

struct spec_seccomp_rule
{
  char **names;
  char *action; /* "SCMP_ACT_ALLOW" ... */
  bool has_errno_ret;
  uint32_t errno_ret;
  struct spec_seccomp_arg *args;
  size_t n_args;
};

struct spec_seccomp
{
  bool present;
  char *default_action;
  bool has_default_errno_ret;
  uint32_t default_errno_ret;
  char **architectures;
  char **flags;
  char *listener_path;     /* a seccomp agent's socket (SCMP_ACT_NOTIFY) */
  char *listener_metadata; /* passed on to it as is */
  struct spec_seccomp_rule *syscalls;
  size_t n_syscalls;
};

struct spec_linux
{
  struct spec_namespace ns[NS__MAX];
  struct spec_idmap *uid_mappings, *gid_mappings;
  size_t n_uid_mappings, n_gid_mappings;
  struct spec_device *devices;
  size_t n_devices;
  char *cgroups_path;
  bool has_resources;
  struct spec_resources resources;
  struct spec_kv *sysctl;
  size_t n_sysctl;
  struct spec_seccomp seccomp;
  char *rootfs_propagation;
  char **masked_paths;
  char **readonly_paths;
  char *mount_label;
  bool has_time_offsets;
  int64_t monotonic_secs, monotonic_nanosecs, boottime_secs, boottime_nanosecs;
};

struct spec
{
  char *oci_version; /* required */
  char *root_path;   /* required; relative to the bundle or absolute */
  bool root_readonly;
  struct spec_process *process; /* NULL when absent */
  char *hostname;
  char *domainname;
  struct spec_mount *mounts;
  size_t n_mounts;
  struct spec_hook_list hooks[HOOK__MAX];
  struct spec_kv *annotations;
  size_t n_annotations;
  struct spec_linux linux_; /* "linux" (a predefined macro in GNU C) */
};

struct moat_error;

/* Parse config.json text (len bytes). Caps: 4 MiB, nesting depth 64, checked
 * before the JSON parser sees the text. Errors name the JSON path:
 * "process.args: expected array of strings". */
int spec_parse (const char *text, size_t len, struct spec **ret,
                struct moat_error **err);
/* The same from a parsed JSON object (a spec saved inside another file). */
struct json_node;
int spec_parse_node (const struct json_node *root, struct spec **ret,
                     struct moat_error **err);
/* s as config.json text again, which spec_parse reads back as the same
 * struct (spec_write.c); spec_write puts it in an open writer. */
char *spec_to_json (const struct spec *s);
struct json_writer;
void spec_write (struct json_writer *w, const struct spec *s);
/* Read and parse BUNDLE/config.json (or any path). */
int spec_load (const char *path, struct spec **ret, struct moat_error **err);
/* Parse an exec process.json (a "process" object alone). */
int spec_process_parse (const char *text, size_t len, struct spec_process **ret,
                        struct moat_error **err);
/* Parse update --resources JSON (a linux.resources object alone). */
int spec_resources_parse (const char *text, size_t len,
                          struct spec_resources *ret, struct moat_error **err);

void spec_free (struct spec *s);
void spec_process_free (struct spec_process *p);
void spec_resources_clear (struct spec_resources *r);
void spec_mount_clear (struct spec_mount *m);

/* Name tables shared by parser, profile and runtime. */
/* The one namespace table, indexed by type: what config.json, clone() and
 * /proc call each. */
struct ns_info
{
  const char *config_name; /* linux.namespaces[].type: "mount", "network" */
  const char *proc_name;   /* /proc/PID/ns/NAME: "mnt", "net" */
  int clone_flag;          /* CLONE_NEWNS, CLONE_NEWNET (setns, unshare) */
};
extern const struct ns_info ns_table[NS__MAX];
const char *ns_type_name (enum ns_type t);     /* "mount", "network", ... */
int ns_type_from_name (const char *name);      /* -1 if unknown */
const char *hook_kind_name (enum hook_kind k); /* "prestart", ... */
int rlimit_from_name (const char *name); /* "RLIMIT_NOFILE" -> number, -1 */
/* A capability's OCI name ("CAP_CHOWN"; libcap's is "cap_chown"), newly
 * allocated; one libcap does not know is "CAP_N". */
char *spec_cap_name (int cap);

const char *spec_annotation (const struct spec *s, const char *key);
/* The value of key in kv[0..n) (annotations as a state keeps them). */
const char *spec_kv_get (const struct spec_kv *kv, size_t n, const char *key);
/* Set (add or replace) annotation key to a copy of value. */
void spec_set_annotation (struct spec *s, const char *key, const char *value);

#endif
