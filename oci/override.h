/* What the profile changed or refused, one entry per value: the audit
 * line, the saved decision and `profile explain` list them. Below policy/
 * so that the runtime, applying a saved decision, records what it clamps
 * without calling the policy. */
#ifndef MOAT_OVERRIDE_H
#define MOAT_OVERRIDE_H

#include <stddef.h>

enum override_kind
{
  OVERRIDE_CHANGED, /* the profile replaced a value */
  OVERRIDE_REMOVED, /* the profile dropped something (an env var, a cap set) */
  OVERRIDE_ADDED,   /* the profile added something (a mount, a masked path) */
  OVERRIDE_IGNORED, /* a loosening annotation, ignored */
  OVERRIDE_REFUSED, /* create refused (a dangerous bind) */
};

struct override
{
  enum override_kind kind;
  char *path;     /* JSON path: "process.capabilities.bounding" */
  char *asked;    /* what config.json asked (text), may be NULL */
  char *enforced; /* what holds now, may be NULL */
};

struct override_list
{
  struct override *v;
  size_t n;
};

void override_list_clear (struct override_list *l);
/* l NULL: nothing recorded. */
void override_list_add (struct override_list *l, enum override_kind kind,
                        const char *path, const char *asked,
                        const char *enforced);
/* Append every entry of from to to, leaving from empty. */
void override_list_move (struct override_list *to, struct override_list *from);
const char *override_kind_name (enum override_kind k);
/* KEY: [{kind, path, asked, enforced}, ...] */
struct json_writer;
void jw_overrides (struct json_writer *w, const char *key,
                   const struct override_list *ov);

#endif
