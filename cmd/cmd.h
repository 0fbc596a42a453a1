/* The CLI: main.c parses the global flags and dispatches; each verb file
 * parses its own flags into a struct and calls one runtime/ function. */
#ifndef MOAT_CMD_H
#define MOAT_CMD_H

#include <stdbool.h>

#include "../runtime/container.h"
#include "../lib/error.h"

struct cmd_ctx
{
  struct moat_globals g;
  const char *verb;
  const char *id;  /* for the error prefix, set by the verb */
  int exit_status; /* what main returns on success (run, exec) */
};

/* A flag a verb accepts. has_arg: takes a value (--x v or --x=v). */
struct cmd_opt
{
  const char *name; /* long name without dashes */
  char short_name;  /* 0 if none */
  bool has_arg;
  int id;
};

/* Parse flags up to the first positional (or "--"). A flag runc or crun
 * knows for VERB (NULL: the global flags) but moat does not use is skipped,
 * with its value (engines pass them); any other unknown flag is an error.
 * Calls cb for each; *ret_index is the first positional argument. */
int cmd_parse (const char *verb, int argc, char **argv, int start,
               const struct cmd_opt *opts,
               int (*cb) (void *ctx, int id, const char *val,
                          struct moat_error **err),
               void *ctx, int *ret_index, struct moat_error **err);
/* Take argv[idx] as the container ID (checked) into ctx->id. */
int cmd_take_id (struct cmd_ctx *ctx, int argc, char **argv, int idx,
                 struct moat_error **err);
/* True if argv has "--help" or "-h" before any positional. */
bool cmd_wants_help (int argc, char **argv);

#define VERB(name)                                                             \
  int cmd_##name (struct cmd_ctx *ctx, int argc, char **argv,                  \
                  struct moat_error **err)

VERB (create);
VERB (start);
VERB (state);
VERB (kill);
VERB (delete);
VERB (run);
VERB (list);
VERB (spec);
VERB (features);
VERB (exec);
VERB (ps);
VERB (pause);
VERB (resume);
VERB (update);
VERB (events);
VERB (profile);
VERB (sandbox);
VERB (session);

/* moat spec's config.json (cmd/spec.c), the base of a sandbox's. */
extern const char spec_template[];

#endif
