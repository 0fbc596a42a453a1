/* The list of overrides: building it, and its JSON both ways. */
#include "override.h"

#include <string.h>

#include "../lib/error.h"
#include "../lib/util.h"
#include "json.h"

void
override_list_add (struct override_list *l, enum override_kind kind,
                   const char *path, const char *asked, const char *enforced)
{
  if (l == NULL)
    return;
  l->v = xrealloc (l->v, (l->n + 1) * sizeof (*l->v));
  l->v[l->n++] = (struct override){
    .kind = kind,
    .path = xstrdup (path),
    .asked = xstrdup (asked),
    .enforced = xstrdup (enforced),
  };
}

void
override_list_clear (struct override_list *l)
{
  for (size_t i = 0; l && i < l->n; i++)
    {
      free (l->v[i].path);
      free (l->v[i].asked);
      free (l->v[i].enforced);
    }
  if (l)
    {
      free (l->v);
      l->v = NULL;
      l->n = 0;
    }
}

void
jw_overrides (struct json_writer *w, const char *key,
              const struct override_list *ov)
{
  jw_key (w, key);
  jw_array_begin (w);
  for (size_t i = 0; ov && i < ov->n; i++)
    {
      jw_object_begin (w);
      jw_key (w, "kind");
      jw_string (w, override_kind_name (ov->v[i].kind));
      jw_key (w, "path");
      jw_string (w, ov->v[i].path);
      jw_key (w, "asked");
      jw_string (w, ov->v[i].asked);
      jw_key (w, "enforced");
      jw_string (w, ov->v[i].enforced);
      jw_object_end (w);
    }
  jw_array_end (w);
}

void
override_list_move (struct override_list *to, struct override_list *from)
{
  if (from->n == 0)
    return;
  to->v = xrealloc (to->v, (to->n + from->n) * sizeof (*to->v));
  memcpy (to->v + to->n, from->v, from->n * sizeof (*from->v));
  to->n += from->n;
  free (from->v);
  *from = (struct override_list){ 0 };
}

const char *
override_kind_name (enum override_kind k)
{
  switch (k)
    {
    case OVERRIDE_CHANGED:
      return "changed";
    case OVERRIDE_REMOVED:
      return "removed";
    case OVERRIDE_ADDED:
      return "added";
    case OVERRIDE_IGNORED:
      return "ignored";
    case OVERRIDE_REFUSED:
      return "refused";
    }
  return "unknown";
}
