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

int
override_list_parse (const json_node *a, struct override_list *ov,
                     struct moat_error **err)
{
  if (a == NULL || !json_is_array (a))
    return moat_fail (err, 0, "overrides: expected an array");
  for (size_t i = 0; i < json_array_len (a); i++)
    {
      const json_node *o = json_array_get (a, i);
      const char *kind
          = json_is_object (o) ? json_member_string (o, "kind", false) : NULL;
      const char *path = kind ? json_member_string (o, "path", false) : NULL;
      const char *asked = path ? json_member_string (o, "asked", true) : NULL;
      const char *enforced
          = asked ? json_member_string (o, "enforced", true) : NULL;
      int k = -1;

      for (int c = OVERRIDE_CHANGED; kind && c <= OVERRIDE_REFUSED; c++)
        if (strcmp (kind, override_kind_name (c)) == 0)
          k = c;
      if (k < 0 || enforced == NULL)
        return moat_fail (err, 0, "overrides[%zu]: malformed", i);
      override_list_add (ov, k, path, *asked ? asked : NULL,
                         *enforced ? enforced : NULL);
    }
  return 0;
}
