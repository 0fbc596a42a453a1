/* config.json's linux.seccomp compiled with libseccomp on the host side, and
 * the loader the container's init uses for every filter (seccomp(2) only:
 * no libseccomp after clone). Semantics follow runc, which engines' default
 * profiles are written for: syscall names this libseccomp does not know are
 * skipped (profiles list syscalls of newer kernels), rules whose action is
 * the default action are dropped, and several conditions on one argument
 * index turn into one rule per condition. */
#include "seccomp_internal.h" /* <seccomp.h> before "seccomp.h" */
#include "../../lib/util.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/* The kernel caps the errno a filter can return at MAX_ERRNO. */
#define SECCOMP_MAX_ERRNO 4095
#define SECCOMP_MAX_ARGS 6

struct action_name
{
  const char *name;
  uint32_t action;
};

static const struct action_name plain_actions[] = {
  { "SCMP_ACT_KILL", SCMP_ACT_KILL_THREAD },
  { "SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD },
  { "SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS },
  { "SCMP_ACT_TRAP", SCMP_ACT_TRAP },
  { "SCMP_ACT_ALLOW", SCMP_ACT_ALLOW },
  { "SCMP_ACT_LOG", SCMP_ACT_LOG },
};

struct op_name
{
  const char *name;
  enum scmp_compare op;
};

static const struct op_name compare_ops[] = {
  { "SCMP_CMP_NE", SCMP_CMP_NE },
  { "SCMP_CMP_LT", SCMP_CMP_LT },
  { "SCMP_CMP_LE", SCMP_CMP_LE },
  { "SCMP_CMP_EQ", SCMP_CMP_EQ },
  { "SCMP_CMP_GE", SCMP_CMP_GE },
  { "SCMP_CMP_GT", SCMP_CMP_GT },
  { "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
};

struct flag_name
{
  const char *name;
  unsigned int flag;
};

/* TSYNC is harmless (the init is single-threaded) and kept for fidelity. */
static const struct flag_name filter_flags[] = {
  { "SECCOMP_FILTER_FLAG_TSYNC", SECCOMP_FILTER_FLAG_TSYNC },
  { "SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG },
  { "SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW },
};

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif

/* field is the JSON path of the action ("linux.seccomp.syscalls[3]"); the
 * errno return applies to ERRNO and TRACE only, EPERM when absent. */
static int
parse_action (const char *name, bool has_errno_ret, uint32_t errno_ret,
              const char *field, const char *action_key, const char *errno_key,
              bool notify_ok, uint32_t *ret, struct moat_error **err)
{
  bool is_errno, is_trace;

  if (name == NULL)
    return moat_fail (err, 0, "%s.%s: missing", field, action_key);
  /* For a rule, where an agent listens (listenerPath, which the operator
   * config must name: container_check_seccomp_agent). */
  if (strcmp (name, "SCMP_ACT_NOTIFY") == 0)
    {
      if (!notify_ok)
        return moat_fail (err, 0,
                          "%s.%s: SCMP_ACT_NOTIFY needs "
                          "linux.seccomp.listenerPath%s",
                          field, action_key,
                          strcmp (action_key, "defaultAction") == 0
                              ? " and cannot be the default action"
                              : "");
      if (has_errno_ret)
        return moat_fail (err, 0, "%s.%s: SCMP_ACT_NOTIFY takes no errno",
                          field, errno_key);
      *ret = SCMP_ACT_NOTIFY;
      return 0;
    }

  is_errno = strcmp (name, "SCMP_ACT_ERRNO") == 0;
  is_trace = strcmp (name, "SCMP_ACT_TRACE") == 0;
  if (is_errno || is_trace)
    {
      uint32_t data = has_errno_ret ? errno_ret : EPERM;
      if (is_errno && data > SECCOMP_MAX_ERRNO)
        return moat_fail (err, 0, "%s.%s: %u is not an errno value (0-%d)",
                          field, errno_key, data, SECCOMP_MAX_ERRNO);
      if (is_trace && data > 0xffff)
        return moat_fail (err, 0, "%s.%s: %u does not fit in 16 bits", field,
                          errno_key, data);
      *ret = is_errno ? SCMP_ACT_ERRNO (data) : SCMP_ACT_TRACE (data);
      return 0;
    }

  for (size_t i = 0; i < sizeof (plain_actions) / sizeof (plain_actions[0]);
       i++)
    if (strcmp (name, plain_actions[i].name) == 0)
      {
        /* The runtime spec: an errno for an action without one is an
         * error, not something to ignore. */
        if (has_errno_ret)
          return moat_fail (err, 0,
                            "%s.%s: only SCMP_ACT_ERRNO and SCMP_ACT_TRACE "
                            "take an errno, not %s",
                            field, errno_key, name);
        *ret = plain_actions[i].action;
        return 0;
      }
  return moat_fail (err, 0, "%s.%s: unknown action %s", field, action_key,
                    name);
}

static int
parse_arg (const struct spec_seccomp_arg *a, const char *field,
           struct scmp_arg_cmp *ret, struct moat_error **err)
{
  if (a->index >= SECCOMP_MAX_ARGS)
    return moat_fail (err, 0, "%s.index: %u is not a syscall argument (0-%d)",
                      field, a->index, SECCOMP_MAX_ARGS - 1);
  if (a->op == NULL)
    return moat_fail (err, 0, "%s.op: missing", field);
  for (size_t i = 0; i < sizeof (compare_ops) / sizeof (compare_ops[0]); i++)
    if (strcmp (a->op, compare_ops[i].name) == 0)
      {
        /* For MASKED_EQ value is the mask and valueTwo the result. */
        *ret = (struct scmp_arg_cmp){ .arg = a->index,
                                      .op = compare_ops[i].op,
                                      .datum_a = a->value,
                                      .datum_b = a->value_two };
        return 0;
      }
  return moat_fail (err, 0, "%s.op: unknown operator %s", field, a->op);
}

static int
add_arch (scmp_filter_ctx ctx, const char *name, size_t i,
          struct moat_error **err)
{
  static const char prefix[] = "SCMP_ARCH_";
  cleanup_free char *lower = NULL;
  uint32_t arch;
  int r;

  if (strncmp (name, prefix, sizeof (prefix) - 1) != 0
      || name[sizeof (prefix) - 1] == '\0')
    return moat_fail (err, 0,
                      "linux.seccomp.architectures[%zu]: unknown architecture "
                      "%s",
                      i, name);
  lower = xstrdup (name + sizeof (prefix) - 1);
  for (char *p = lower; *p; p++)
    if (*p >= 'A' && *p <= 'Z')
      *p = (char)(*p - 'A' + 'a');
  arch = seccomp_arch_resolve_name (lower);
  if (arch == 0)
    return moat_fail (err, 0,
                      "linux.seccomp.architectures[%zu]: unknown architecture "
                      "%s",
                      i, name);
  r = seccomp_arch_add (ctx, arch);
  if (r < 0 && r != -EEXIST)
    return moat_fail (err, -r, "linux.seccomp.architectures[%zu]: adding %s", i,
                      name);
  return 0;
}

static int
parse_flags (char *const *flags, bool listener, unsigned int *ret,
             struct moat_error **err)
{
  unsigned int all = 0;

  for (size_t i = 0; flags && flags[i]; i++)
    {
      bool known = false;
      for (size_t j = 0; j < sizeof (filter_flags) / sizeof (filter_flags[0]);
           j++)
        if (strcmp (flags[i], filter_flags[j].name) == 0)
          {
            all |= filter_flags[j].flag;
            known = true;
          }
      if (known)
        continue;
      if (strcmp (flags[i], "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV") == 0)
        {
          if (!listener)
            return moat_fail (err, 0,
                              "linux.seccomp.flags[%zu]: %s only applies "
                              "with a listenerPath (SCMP_ACT_NOTIFY)",
                              i, flags[i]);
          all |= SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
          continue;
        }
      return moat_fail (err, 0, "linux.seccomp.flags[%zu]: unknown flag %s", i,
                        flags[i]);
    }
  *ret = all;
  return 0;
}

static bool
args_share_an_index (const struct spec_seccomp_rule *rule)
{
  unsigned int seen[SECCOMP_MAX_ARGS] = { 0 };

  for (size_t i = 0; i < rule->n_args; i++)
    if (rule->args[i].index < SECCOMP_MAX_ARGS
        && seen[rule->args[i].index]++ > 0)
      return true;
  return false;
}

static int
add_rule (scmp_filter_ctx ctx, const struct spec_seccomp_rule *rule, size_t i,
          uint32_t default_action, bool notify_ok, struct moat_error **err)
{
  cleanup_free char *field = xasprintf ("linux.seccomp.syscalls[%zu]", i);
  cleanup_free struct scmp_arg_cmp *cmps = NULL;
  uint32_t action;
  bool split;
  int r;

  r = parse_action (rule->action, rule->has_errno_ret, rule->errno_ret, field,
                    "action", "errnoRet", notify_ok, &action, err);
  if (r < 0)
    return r;
  cmps = xcalloc (rule->n_args, sizeof (*cmps));
  for (size_t j = 0; j < rule->n_args; j++)
    {
      cleanup_free char *arg_field = xasprintf ("%s.args[%zu]", field, j);
      r = parse_arg (&rule->args[j], arg_field, &cmps[j], err);
      if (r < 0)
        return r;
    }
  /* libseccomp refuses a rule that repeats the default action. */
  if (action == default_action)
    return 0;
  /* libseccomp rejects two conditions on one argument in a rule; runc
   * then adds each condition as a rule of its own (OR instead of AND), and
   * engines' profiles are written for that. */
  split = args_share_an_index (rule);

  for (size_t n = 0; rule->names && rule->names[n]; n++)
    {
      int nr = seccomp_syscall_resolve_name (rule->names[n]);
      if (nr == __NR_SCMP_ERROR)
        continue;
      r = 0;
      if (split)
        for (size_t j = 0; j < rule->n_args && r == 0; j++)
          r = seccomp_rule_add_array (ctx, action, nr, 1, &cmps[j]);
      else
        r = seccomp_rule_add_array (ctx, action, nr, (unsigned int)rule->n_args,
                                    cmps);
      if (r < 0)
        return moat_fail (err, -r, "%s: adding rule for %s", field,
                          rule->names[n]);
    }
  return 0;
}

int
seccomp_compile_config (const struct spec_seccomp *s, struct seccomp_prog *ret,
                        struct moat_error **err)
{
  cleanup_scmp_ctx scmp_filter_ctx ctx = NULL;
  struct seccomp_prog prog = { 0 };
  uint32_t default_action;
  int r;

  if (!s->present)
    {
      *ret = prog;
      return 0;
    }
  r = parse_action (s->default_action, s->has_default_errno_ret,
                    s->default_errno_ret, "linux.seccomp", "defaultAction",
                    "defaultErrnoRet", false, &default_action, err);
  if (r < 0)
    return r;
  r = parse_flags (s->flags, s->listener_path != NULL, &prog.flags, err);
  if (r < 0)
    return r;
  /* The kernel hands the listener back from seccomp(2); TSYNC would take
   * that return value for itself (the init is single-threaded anyway). */
  if (s->listener_path)
    prog.flags = (prog.flags & ~(unsigned int)SECCOMP_FILTER_FLAG_TSYNC)
                 | SECCOMP_FILTER_FLAG_NEW_LISTENER;

  ctx = seccomp_init (default_action);
  if (ctx == NULL)
    return moat_fail (err, 0,
                      "linux.seccomp: libseccomp rejected the "
                      "default action");
  /* moat sets no_new_privs itself; the filter is loaded by seccomp(2). */
  r = seccomp_attr_set (ctx, SCMP_FLTATR_CTL_NNP, 0);
  if (r < 0)
    return moat_fail (err, -r, "linux.seccomp: clearing the NNP attribute");
  /* A binary tree instead of a linear scan; libseccomp 2.5.4 misbuilds it
   * for a filter without rules, and it only pays off for long ones. */
  if (s->n_syscalls > 32)
    seccomp_attr_set (ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);

  for (size_t i = 0; s->architectures && s->architectures[i]; i++)
    {
      r = add_arch (ctx, s->architectures[i], i, err);
      if (r < 0)
        return r;
    }
  for (size_t i = 0; i < s->n_syscalls; i++)
    {
      r = add_rule (ctx, &s->syscalls[i], i, default_action,
                    s->listener_path != NULL, err);
      if (r < 0)
        return r;
    }

  r = seccomp_ctx_export (ctx, &prog, err);
  if (r < 0)
    return moat_error_wrap (err, "linux.seccomp");
  *ret = prog;
  return 0;
}

int
seccomp_ctx_export (scmp_filter_ctx ctx, struct seccomp_prog *ret,
                    struct moat_error **err)
{
  cleanup_close int fd = memfd_create ("moat-seccomp", MFD_CLOEXEC);
  cleanup_free char *buf = NULL;
  struct stat st;
  size_t len;
  int r;

  if (fd < 0)
    return moat_fail (err, errno, "creating a memfd for the BPF program");
  r = seccomp_export_bpf (ctx, fd);
  if (r < 0)
    return moat_fail (err, -r, "compiling the filter to BPF");
  if (fstat (fd, &st) < 0)
    return moat_fail (err, errno, "fstat on the BPF memfd");
  len = (size_t)st.st_size;
  if (len == 0 || len % sizeof (struct sock_filter) != 0)
    return moat_fail (err, 0, "libseccomp exported %zu bytes of BPF", len);
  if (len / sizeof (struct sock_filter) > BPF_MAXINSNS)
    return moat_fail (err, 0,
                      "the filter is %zu BPF instructions, more than the "
                      "kernel's limit of %d",
                      len / sizeof (struct sock_filter), BPF_MAXINSNS);
  buf = xmalloc (len);
  r = seccomp_read_fd (fd, buf, len, err);
  if (r < 0)
    return r;
  ret->insns = steal_pointer (&buf);
  ret->n_insns = len / sizeof (struct sock_filter);
  return 0;
}

int
seccomp_read_fd (int fd, void *buf, size_t len, struct moat_error **err)
{
  int r = pread_all (fd, buf, len, 0);

  if (r == -ENODATA)
    return moat_fail (err, 0, "the BPF program ended early");
  if (r < 0)
    return moat_fail (err, -r, "reading the BPF program");
  return 0;
}

static int
seccomp_set_filter (unsigned int flags, struct sock_fprog *prog)
{
  return (int)syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, prog);
}

int
seccomp_prog_load (const struct seccomp_prog *p, struct moat_error **err)
{
  return seccomp_prog_load_listener (p, NULL, err);
}

int
seccomp_prog_load_listener (const struct seccomp_prog *p, int *ret_listener,
                            struct moat_error **err)
{
  /* Optional flags an older kernel may not know: the filter matters more. */
  const unsigned int optional
      = SECCOMP_FILTER_FLAG_LOG | SECCOMP_FILTER_FLAG_SPEC_ALLOW;
  struct sock_fprog prog
      = { .len = (unsigned short)p->n_insns, .filter = p->insns };
  int r;

  if (p->n_insns == 0)
    return 0;
  if (p->n_insns > BPF_MAXINSNS)
    return moat_fail (err, 0, "loading seccomp filter: %zu instructions",
                      p->n_insns);
  r = seccomp_set_filter (p->flags, &prog);
  if (r < 0 && errno == EINVAL && (p->flags & optional) != 0)
    r = seccomp_set_filter (p->flags & ~optional, &prog);
  if (r < 0)
    return moat_fail (err, errno, "loading seccomp filter");
  if (p->flags & SECCOMP_FILTER_FLAG_NEW_LISTENER)
    {
      if (ret_listener)
        *ret_listener = r;
      else
        close (r); /* no agent: notified syscalls fail with ENOSYS */
      return 0;
    }
  /* With TSYNC the kernel returns the id of a thread it could not sync. */
  if (r > 0)
    return moat_fail (err, 0,
                      "loading seccomp filter: thread %d could not be "
                      "synchronized",
                      r);
  return 0;
}

#if defined(__x86_64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

void
seccomp_prog_let_filter_stack (const struct seccomp_prog *p,
                               struct seccomp_prog *ret)
{
#ifdef NATIVE_AUDIT_ARCH
  /* Each failed test jumps past the rest of the prologue, to p's first
   * instruction; p's own jumps are relative and still land right. */
  const struct sock_filter prologue[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, NATIVE_AUDIT_ARCH, 0, 5),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, __NR_seccomp, 0, 3),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, args)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_SET_MODE_FILTER, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  const size_t n = sizeof (prologue) / sizeof (prologue[0]);
#else
  const struct sock_filter *prologue = NULL;
  const size_t n = 0;
#endif
  struct sock_filter *v = xcalloc (n + p->n_insns, sizeof (*v));
  if (n)
    memcpy (v, prologue, n * sizeof (*v));
  memcpy (v + n, p->insns, p->n_insns * sizeof (*v));
  *ret = (struct seccomp_prog){ .insns = v,
                                .n_insns = n + p->n_insns,
                                .flags = p->flags };
}

void
seccomp_prog_clear (struct seccomp_prog *p)
{
  free (p->insns);
  p->insns = NULL;
  p->n_insns = 0;
  p->flags = 0;
}
