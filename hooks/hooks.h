/* OCI lifecycle hooks: each runs with the state JSON on stdin, its env and
 * args, killed after its timeout. */
#ifndef MOAT_HOOKS_H
#define MOAT_HOOKS_H

#include "../lib/error.h"
#include "../oci/spec.h"

/* Run the hooks of one kind in order; the first failure stops and errors
 * ("prestart hook /x: exited with status 1", "...: timed out after 2s").
 * poststart and poststop hooks all run even after one fails (runtime-spec:
 * a warning), and the error lists every failure, joined by "; ".
 * Hooks inherit no fd but 0 (state), 1 and 2 (moat's, or /dev/null). */
int hooks_run (const struct spec_hook_list *hooks, enum hook_kind kind,
               const char *state_json, struct moat_error **err);

#endif
