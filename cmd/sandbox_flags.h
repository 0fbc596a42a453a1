/* moat sandbox's flags, which moat session create takes too. */
#ifndef MOAT_SANDBOX_FLAGS_H
#define MOAT_SANDBOX_FLAGS_H

#include "../app/sandbox.h"
#include "cmd.h"

struct sandbox_parse
{
  struct sandbox_opts o;
  char **ro_binds;
  char **env;
  int cache_verb; /* --list-cache, --prune-cache or 0 */
};

/* Ends with { NULL }; its ids are below 64. */
extern const struct cmd_opt sandbox_opts_table[];
/* cmd_parse's callback for those flags; p is a struct sandbox_parse. */
int sandbox_cb (void *p, int id, const char *val, struct moat_error **err);
/* --stderr-fd N: an open fd above 2 (made close-on-exec). */
int sandbox_parse_stderr_fd (const char *val, int *ret,
                             struct moat_error **err);
/* --user UID[:GID]: *ret_gid -1 when no GID is given. */
int sandbox_parse_user (const char *val, int64_t *ret_uid, int64_t *ret_gid,
                        struct moat_error **err);
/* Refuse any flag not in table before "--" (cmd_parse would skip some). */
int sandbox_check_flags (const struct cmd_opt *table, const char *verb,
                         int argc, char **argv, struct moat_error **err);

#endif
