/* seccomp filters, compiled on the host side (libseccomp) to classic BPF and
 * loaded by the container's init just before execve. Two filters stack:
 * the one config.json asks for (if any) and moat's built-in one (G8). */
#ifndef MOAT_SECCOMP_H
#define MOAT_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/error.h"
#include "../../oci/spec.h"

struct seccomp_prog
{
  void *insns;        /* struct sock_filter[], malloc'ed */
  size_t n_insns;     /* number of struct sock_filter */
  unsigned int flags; /* SECCOMP_FILTER_FLAG_* from config.json's flags */
};

/* Compile linux.seccomp (all SCMP_ACT_* actions incl. errnoRet, all
 * architectures, all SCMP_CMP_* ops). Errors name the field:
 * "linux.seccomp.syscalls[3].action: unknown action SCMP_ACT_FOO". */
int seccomp_compile_config (const struct spec_seccomp *s,
                            struct seccomp_prog *ret, struct moat_error **err);
/* seccomp_compile_config, cached as BPF in CACHE_DIR/seccomp-config-<hash>
 * .bpf: an engine's default profile costs libseccomp ~11 ms a create. The
 * file holds the filter's whole description (and this build's, libseccomp's
 * and the kernel's versions), compared byte for byte on a hit: config.json
 * is half trusted, a hash collision must give nothing away. cache_dir NULL
 * or a filter not present: as seccomp_compile_config. */
int seccomp_compile_config_cached (const struct spec_seccomp *s,
                                   const char *cache_dir,
                                   struct seccomp_prog *ret,
                                   struct moat_error **err);
/* The built-in filter of G8: an allowlist (default ENOSYS) at least as strict
 * as Docker's default, EPERM for the listed dangerous syscalls and socket
 * families, and for any mode with S_ISUID or S_ISGID (chmod, open with
 * O_CREAT, mkdir, mknod ...: G12). Cached as BPF in
 * CACHE_DIR/seccomp-<hash>.bpf (keyed by a hash of the filter's definition and
 * the libseccomp version) so a create does not recompile; cache_dir NULL
 * disables the cache. */
int seccomp_builtin (const char *cache_dir, struct seccomp_prog *ret,
                     struct moat_error **err);

/* Levels of the built-in filter. agent: the syscalls real agent workloads
 * make (tests/agent/trace.sh), a subset of the default level; everything
 * else ENOSYS, or EPERM where the default level says EPERM. */
enum seccomp_level
{
  SECCOMP_LEVEL_DEFAULT,
  SECCOMP_LEVEL_AGENT,
};
/* The level create chose is the annotation SECCOMP_LEVEL_ANNOTATION
 * (policy/verdicts.h). */
int seccomp_builtin_level (enum seccomp_level level, const char *cache_dir,
                           struct seccomp_prog *ret, struct moat_error **err);
/* How many native syscalls the level lets through (some of them with
 * their arguments checked). */
size_t seccomp_level_count (enum seccomp_level level);
const char *seccomp_level_name (enum seccomp_level level);
/* The level among annotations (the state's, for `moat exec`): default
 * where none or an unknown one. */
enum seccomp_level seccomp_level_of (const struct spec_kv *annotations,
                                     size_t n);
/* Load into the calling thread (no_new_privs must already be set). Uses only
 * the seccomp(2) syscall: safe in the container's init after clone.
 * The symbol is seccomp_prog_load: libseccomp exports a seccomp_load of its
 * own, and a second one in libmoat.a would be linked in place of it for
 * any program that calls libseccomp's. seccomp_load (p, err) stays as a
 * name; a file that also includes <seccomp.h> must include it first. */
int seccomp_prog_load (const struct seccomp_prog *p, struct moat_error **err);
/* The same; for a filter with SECCOMP_FILTER_FLAG_NEW_LISTENER (a
 * listenerPath), *ret_listener is the seccomp agent's fd. */
int seccomp_prog_load_listener (const struct seccomp_prog *p, int *ret_listener,
                                struct moat_error **err);
#define seccomp_load(p, err) seccomp_prog_load ((p), (err))
/* p, with a first rule that lets seccomp(SECCOMP_SET_MODE_FILTER) of the
 * native architecture through: the config's filter is loaded first and
 * the built-in one after it (whose answers win where both deny, G8), so
 * an allowlist without seccomp(2), which runc loads alone, must not stop
 * the second load. Adding a filter only ever restricts; the built-in
 * filter then decides seccomp(2) for the payload. */
void seccomp_prog_let_filter_stack (const struct seccomp_prog *p,
                                    struct seccomp_prog *ret);
void seccomp_prog_clear (struct seccomp_prog *p);

#endif
