/* The tree json_parse hands out, built from yajl's event parser into one
 * arena. yajl's own tree parser allocates every node, key and string on its
 * own and grows each object's arrays one member at a time; for the 7 KB
 * policy.json that every exec reads, malloc and free were most of the parse
 * (callgrind: 1.2 M of the 2.4 M instructions of a session exec). Here a
 * whole document is a few blocks, freed at once. The nodes are yajl's own
 * struct, so json.c reads them as before. */
#include "json_tree.h"

#include <stdalign.h>
#include <stdio.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "../lib/util.h"
#include "json.h"

struct arena_block
{
  struct arena_block *next;
  size_t used, cap;
  alignas (max_align_t) char data[];
};

/* A document: the root node sits in it, so json_tree_free finds the
 * blocks from the root. */
struct tree_doc
{
  struct arena_block *blocks;
  struct yajl_val_s root;
};

struct open_container
{
  yajl_val node;
  size_t cap;      /* room in node's arrays */
  const char *key; /* an object's key waiting for its value */
};

struct tree_builder
{
  struct tree_doc *doc;
  size_t block_size;
  size_t depth;
  bool have_root;
  struct open_container stack[JSON_MAX_DEPTH + 2];
};

static void *
arena_alloc (struct tree_builder *b, size_t n)
{
  struct arena_block *blk = b->doc->blocks;

  n = (n + alignof (max_align_t) - 1) & ~(alignof (max_align_t) - 1);
  if (blk == NULL || blk->cap - blk->used < n)
    {
      size_t cap = n > b->block_size ? n : b->block_size;
      blk = xmalloc (sizeof (*blk) + cap);
      blk->cap = cap;
      blk->used = 0;
      blk->next = b->doc->blocks;
      b->doc->blocks = blk;
    }
  blk->used += n;
  return blk->data + blk->used - n;
}

static char *
arena_strndup (struct tree_builder *b, const unsigned char *s, size_t len)
{
  char *copy = arena_alloc (b, len + 1);
  memcpy (copy, s, len);
  copy[len] = '\0';
  return copy;
}

/* Grow a container's arrays by doubling; the old ones stay in the arena. */
static void
grow (struct tree_builder *b, struct open_container *c, size_t len)
{
  size_t cap = c->cap ? c->cap * 2 : 8;
  bool object = c->node->type == yajl_t_object;
  yajl_val **values
      = object ? &c->node->u.object.values : &c->node->u.array.values;
  yajl_val *new_values = arena_alloc (b, cap * sizeof (*new_values));

  if (len > 0) /* the first arrays are NULL: memcpy may not read those */
    memcpy (new_values, *values, len * sizeof (*new_values));
  *values = new_values;
  if (object)
    {
      const char **keys = arena_alloc (b, cap * sizeof (*keys));
      if (len > 0)
        memcpy (keys, c->node->u.object.keys, len * sizeof (*keys));
      c->node->u.object.keys = keys;
    }
  c->cap = cap;
}

/* A new node, placed in its parent (the first one is the root). */
static yajl_val
new_node (struct tree_builder *b, yajl_type type)
{
  yajl_val v;

  if (b->depth == 0)
    {
      if (b->have_root)
        return NULL; /* yajl reports the trailing garbage itself */
      b->have_root = true;
      v = &b->doc->root;
    }
  else
    {
      struct open_container *c = &b->stack[b->depth - 1];
      v = arena_alloc (b, sizeof (*v));
      if (c->node->type == yajl_t_object)
        {
          size_t len = c->node->u.object.len;
          if (len == c->cap)
            grow (b, c, len);
          c->node->u.object.keys[len] = c->key;
          c->node->u.object.values[len] = v;
          c->node->u.object.len++;
        }
      else
        {
          size_t len = c->node->u.array.len;
          if (len == c->cap)
            grow (b, c, len);
          c->node->u.array.values[len] = v;
          c->node->u.array.len++;
        }
    }
  memset (v, 0, sizeof (*v));
  v->type = type;
  return v;
}

static int
on_null (void *ctx)
{
  return new_node (ctx, yajl_t_null) != NULL;
}

static int
on_boolean (void *ctx, int value)
{
  return new_node (ctx, value ? yajl_t_true : yajl_t_false) != NULL;
}

/* Only the number's text is read (json_int64 parses it exactly). */
static int
on_number (void *ctx, const char *s, size_t len)
{
  yajl_val v = new_node (ctx, yajl_t_number);
  if (v == NULL)
    return 0;
  v->u.number.r = arena_strndup (ctx, (const unsigned char *)s, len);
  return 1;
}

static int
on_string (void *ctx, const unsigned char *s, size_t len)
{
  yajl_val v = new_node (ctx, yajl_t_string);
  if (v == NULL)
    return 0;
  v->u.string = arena_strndup (ctx, s, len);
  return 1;
}

static int
open_container (struct tree_builder *b, yajl_type type)
{
  yajl_val v = new_node (b, type);
  if (v == NULL || b->depth == sizeof (b->stack) / sizeof (b->stack[0]))
    return 0;
  b->stack[b->depth++] = (struct open_container){ .node = v };
  return 1;
}

static int
on_start_map (void *ctx)
{
  return open_container (ctx, yajl_t_object);
}

static int
on_start_array (void *ctx)
{
  return open_container (ctx, yajl_t_array);
}

static int
on_map_key (void *ctx, const unsigned char *s, size_t len)
{
  struct tree_builder *b = ctx;
  b->stack[b->depth - 1].key = arena_strndup (b, s, len);
  return 1;
}

static int
on_end (void *ctx)
{
  struct tree_builder *b = ctx;
  b->depth--;
  return 1;
}

static const yajl_callbacks tree_callbacks = {
  .yajl_null = on_null,
  .yajl_boolean = on_boolean,
  .yajl_number = on_number,
  .yajl_string = on_string,
  .yajl_start_map = on_start_map,
  .yajl_map_key = on_map_key,
  .yajl_end_map = on_end,
  .yajl_start_array = on_start_array,
  .yajl_end_array = on_end,
};

void
json_tree_free (yajl_val root)
{
  struct tree_doc *doc;
  struct arena_block *blk;

  if (root == NULL)
    return;
  doc = (struct tree_doc *)((char *)root - offsetof (struct tree_doc, root));
  blk = doc->blocks;
  while (blk)
    {
      struct arena_block *next = blk->next;
      free (blk);
      blk = next;
    }
  free (doc);
}

yajl_val
json_tree_parse (const char *text, size_t len, char *errbuf, size_t errlen)
{
  struct tree_builder b = { .doc = xcalloc (1, sizeof (*b.doc)),
                            /* nodes and copies take about 3x the text */
                            .block_size = len * 3 + 1024 };
  yajl_handle h = yajl_alloc (&tree_callbacks, NULL, &b);
  yajl_status st;

  if (h == NULL)
    abort ();
  yajl_config (h, yajl_allow_comments, 1);
  st = yajl_parse (h, (const unsigned char *)text, len);
  if (st == yajl_status_ok)
    st = yajl_complete_parse (h);
  if (st != yajl_status_ok || !b.have_root)
    {
      unsigned char *msg
          = yajl_get_error (h, 1, (const unsigned char *)text, len);
      snprintf (errbuf, errlen, "%s", msg ? (const char *)msg : "");
      yajl_free_error (h, msg);
      yajl_free (h);
      json_tree_free (&b.doc->root);
      return NULL;
    }
  yajl_free (h);
  return &b.doc->root;
}
