/* json.c's tree builder: yajl's nodes, in one arena per document. */
#ifndef MOAT_JSON_TREE_H
#define MOAT_JSON_TREE_H

#include <stddef.h>

#include <yajl/yajl_tree.h>

/* The tree of text (len bytes), or NULL with yajl's message in errbuf. */
yajl_val json_tree_parse (const char *text, size_t len, char *errbuf,
                          size_t errlen);
/* Frees a whole tree; only a root from json_tree_parse. */
void json_tree_free (yajl_val root);

#endif
