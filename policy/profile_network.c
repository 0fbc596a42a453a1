/* The profile's network lists (G1 in egress, G2 everywhere): the built-in
 * metadata and private ranges, the operator's egress_deny, egress_allow
 * (an allowlist) and egress_allow_private, the run.moat.egress-allow
 * annotation that narrows them, and the netguard rules they make.
 * Pure: no I/O (the nameservers are read by the runtime and passed in). */
#include "profile.h"
#include "profile_internal.h"
#include "../lib/util.h"
#include "../oci/decision.h"
#include "../oci/json.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

/* Egress: what is not public. 127.0.0.0/8 is here for its IPv6 forms
 * (64:ff9b::127.0.0.1 is the NAT64 gateway's own loopback); the
 * container's own loopback passes before this list is looked at. */
static const char *const private_ranges[] = {
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "224.0.0.0/4",
  "240.0.0.0/4",
  "fc00::/7",
  "fe80::/10",
  "fec0::/10",
  "ff00::/8",
  "64:ff9b:1::/48",
  "::/96",
  NULL,
};

#define ALLOW_KEY "egress_allow"
#define ALLOW_PRIVATE_KEY "egress_allow_private"
#define ANNOTATION "run.moat.egress-allow"

static void
cidr_list_add (struct cidr **list, size_t *n, const struct cidr *c)
{
  *list = xrealloc (*list, (*n + 1) * sizeof (**list));
  (*list)[(*n)++] = *c;
}

static int
add_builtin (struct cidr **list, size_t *n, const char *const *texts,
             struct moat_error **err)
{
  for (size_t i = 0; texts[i]; i++)
    {
      struct cidr c;
      if (cidr_parse (texts[i], &c) < 0)
        return moat_fail (err, EINVAL, "built-in CIDR %s", texts[i]);
      cidr_list_add (list, n, &c);
    }
  return 0;
}

int
profile_network_init (struct profile *p, struct moat_error **err)
{
  if (add_builtin (&p->deny, &p->n_deny, decision_metadata_ranges, err) < 0)
    return -1;
  if (p->egress
      && add_builtin (&p->private_nets, &p->n_private, private_ranges, err) < 0)
    return -1;
  return 0;
}

static struct cidr *
cidrs_dup (const struct cidr *list, size_t n)
{
  struct cidr *d = xcalloc (n ? n : 1, sizeof (*d));
  if (n)
    memcpy (d, list, n * sizeof (*d));
  return d;
}

void
profile_network_dup (struct profile *d, const struct profile *p)
{
  d->deny = cidrs_dup (p->deny, p->n_deny);
  d->allow = cidrs_dup (p->allow, p->n_allow);
  d->private_nets = cidrs_dup (p->private_nets, p->n_private);
}

void
profile_network_free (struct profile *p)
{
  if (p->lists_borrowed)
    return;
  free (p->deny);
  free (p->allow);
  free (p->private_nets);
}

/* Is the IPv4 or IPv6 network C (or one of its IPv6 forms) in the list? */
static bool
list_overlaps (const struct cidr *list, size_t n, const struct cidr *c)
{
  for (size_t i = 0; i < n; i++)
    {
      struct cidr e[CIDR_V6_EMBEDDINGS];
      if (cidr_overlaps (&list[i], c))
        return true;
      if (list[i].family != AF_INET || c->family != AF_INET6)
        continue;
      cidr_v6_embeddings (&list[i], e);
      for (int k = 0; k < CIDR_V6_EMBEDDINGS; k++)
        if (cidr_overlaps (&e[k], c))
          return true;
    }
  return false;
}

static bool
list_contains (const struct cidr *list, size_t n, const struct cidr *c)
{
  for (size_t i = 0; i < n; i++)
    if (cidr_contains (&list[i], c))
      return true;
  return false;
}

/* The metadata ranges and the IPv6 forms of the IPv4 ones, parsed once:
 * an operator's list of 10,000 entries is checked against them entry by
 * entry. */
#define N_METADATA DECISION_N_METADATA_RANGES
static struct cidr metadata_forms[N_METADATA * (1 + CIDR_V6_EMBEDDINGS)];
static size_t n_metadata_forms;

static void
parse_metadata_forms (void)
{
  for (size_t i = 0; decision_metadata_ranges[i]; i++)
    {
      struct cidr *m = &metadata_forms[n_metadata_forms];
      if (cidr_parse (decision_metadata_ranges[i], m) < 0)
        continue;
      n_metadata_forms++;
      if (m->family == AF_INET)
        {
          cidr_v6_embeddings (m, m + 1);
          n_metadata_forms += CIDR_V6_EMBEDDINGS;
        }
    }
}

/* An allow entry wholly inside the metadata ranges (or one of their IPv6
 * forms) can never pass, G2 being checked first: an operator who lists
 * one gets an error rather than a surprise. */
static bool
is_metadata (const struct cidr *c)
{
  if (n_metadata_forms == 0)
    parse_metadata_forms ();
  for (size_t k = 0; k < n_metadata_forms; k++)
    {
      const struct cidr *m = &metadata_forms[k];
      if (m->family == c->family && m->prefix <= c->prefix
          && cidr_overlaps (m, c))
        return true;
    }
  return false;
}

/* The metadata ranges (in C's family) that an allow entry C holds and G2
 * refuses all the same, separated by spaces; NULL if none. */
static char *
metadata_held (const struct cidr *c)
{
  char *text = NULL;

  if (n_metadata_forms == 0)
    parse_metadata_forms ();
  for (size_t k = 0; k < n_metadata_forms; k++)
    if (metadata_forms[k].family == c->family
        && cidr_overlaps (&metadata_forms[k], c))
      {
        cleanup_free char *one = cidr_to_string (&metadata_forms[k]);
        char *next
            = xasprintf ("%s%s%s", text ? text : "", text ? " " : "", one);
        free (text);
        text = next;
      }
  return text;
}

static int
parse_allow_list (const json_node *v, const char *path, struct cidr **ret,
                  size_t *ret_n, struct moat_error **err)
{
  cleanup_free struct cidr *list = NULL;
  size_t n = 0;

  if (!json_is_array (v))
    return moat_fail (err, 0, "%s: expected an array of CIDR[:port] strings",
                      path);
  if (json_array_len (v) > NETGUARD_MAX_ALLOW)
    return moat_fail (err, 0, "%s: %zu entries, at most %d", path,
                      json_array_len (v), NETGUARD_MAX_ALLOW);
  list = xcalloc (json_array_len (v) ? json_array_len (v) : 1, sizeof (*list));
  for (size_t i = 0; i < json_array_len (v); i++)
    {
      const json_node *s = json_array_get (v, i);
      struct cidr c;
      if (!json_is_string (s) || cidr_port_parse (json_string (s), &c) < 0)
        return moat_fail (err, 0,
                          "%s[%zu]: expected \"CIDR\" or \"CIDR:port\" "
                          "(\"[IPv6/len]:port\")",
                          path, i);
      if (is_metadata (&c))
        return moat_fail (err, 0,
                          "%s[%zu]: %s is a cloud metadata address, refused "
                          "in every profile (G2)",
                          path, i, json_string (s));
      list[n++] = c;
    }
  free (*ret);
  *ret = steal_pointer (&list);
  *ret_n = n;
  return 0;
}

void
profile_network_lists_free (struct profile_network_lists *l)
{
  free (l->deny);
  free (l->allow);
  *l = (struct profile_network_lists){ 0 };
}

static int
parse_deny_list (const json_node *v, const char *path, struct cidr **ret,
                 size_t *ret_n, struct moat_error **err)
{
  cleanup_free struct cidr *list = NULL;
  size_t n = json_is_array (v) ? json_array_len (v) : 0;

  if (!json_is_array (v))
    return moat_fail (err, 0, "%s: expected an array of CIDR strings", path);
  list = xcalloc (n ? n : 1, sizeof (*list));
  for (size_t i = 0; i < n; i++)
    {
      const json_node *s = json_array_get (v, i);
      if (!json_is_string (s) || json_string (s)[0] == '\0')
        return moat_fail (err, 0, "%s[%zu]: expected a non-empty string", path,
                          i);
      if (cidr_parse (json_string (s), &list[i]) < 0)
        return moat_fail (err, 0, "%s[%zu]: not a CIDR: \"%s\"", path, i,
                          json_string (s));
    }
  *ret = steal_pointer (&list);
  *ret_n = n;
  return 0;
}

int
profile_network_read (const json_node *obj, const char *prefix,
                      struct profile_network_lists *ret,
                      struct moat_error **err)
{
  const char *dot = *prefix ? "." : "";
  const json_node *allow = json_get (obj, ALLOW_KEY);
  const json_node *allow_private = json_get (obj, ALLOW_PRIVATE_KEY);
  const json_node *v;
  struct profile_network_lists l = { 0 };

  if ((v = json_get (obj, "egress_deny")))
    {
      cleanup_free char *path = xasprintf ("%s%segress_deny", prefix, dot);
      if (parse_deny_list (v, path, &l.deny, &l.n_deny, err) < 0)
        return -1;
      l.has_deny = true;
    }
  if (allow && allow_private)
    {
      profile_network_lists_free (&l);
      return moat_fail (err, 0,
                        "%s%s" ALLOW_KEY " and " ALLOW_PRIVATE_KEY
                        ": give one (an allowlist, or private CIDRs open "
                        "besides the public internet)",
                        prefix, dot);
    }
  if (allow || allow_private)
    {
      cleanup_free char *path = xasprintf (
          "%s%s%s", prefix, dot, allow ? ALLOW_KEY : ALLOW_PRIVATE_KEY);
      if (parse_allow_list (allow ? allow : allow_private, path, &l.allow,
                            &l.n_allow, err)
          < 0)
        {
          profile_network_lists_free (&l);
          return -1;
        }
      l.allow_kind = allow ? PROFILE_ALLOWLIST : PROFILE_ALLOW_PRIVATE;
    }
  *ret = l;
  return 0;
}

int
profile_network_count (size_t *n_deny, const struct profile_network_lists *l,
                       const char *prefix, struct moat_error **err)
{
  if (!l->has_deny)
    return 0;
  *n_deny += l->n_deny;
  if (*n_deny > NETGUARD_MAX_DENY)
    return moat_fail (err, 0,
                      "%s%segress_deny: too many denied CIDRs (%zu with "
                      "the built-in ones, at most %d)",
                      prefix, *prefix ? "." : "", *n_deny, NETGUARD_MAX_DENY);
  return 0;
}

int
profile_network_take (struct profile *p, struct profile_network_lists *l,
                      const char *prefix, struct moat_error **err)
{
  size_t n_deny = p->n_deny;

  if (profile_network_count (&n_deny, l, prefix, err) < 0)
    return -1;
  p->deny_digest[0] = p->allow_digest[0] = '\0';
  if (l->has_deny && l->n_deny > 0)
    {
      /* In l's array, grown (a long one is moved by the kernel, not
       * copied), p's entries first. */
      struct cidr *deny = xrealloc (l->deny, n_deny * sizeof (*deny));
      memmove (deny + p->n_deny, deny, l->n_deny * sizeof (*deny));
      memcpy (deny, p->deny, p->n_deny * sizeof (*deny));
      free (p->deny);
      p->deny = deny;
      p->n_deny = n_deny;
      l->deny = NULL;
      l->n_deny = 0;
    }
  if (l->allow_kind != PROFILE_ALLOW_NONE)
    {
      free (p->allow);
      p->allow = l->allow ? steal_pointer (&l->allow)
                          : xcalloc (1, sizeof (*p->allow));
      p->n_allow = l->n_allow;
      p->allowlist = l->allow_kind == PROFILE_ALLOWLIST;
      l->n_allow = 0;
    }
  return 0;
}

int
profile_network_read_scopes (const struct json_node *root,
                             const char *const *names,
                             struct profile_network_lists *lists,
                             struct moat_error **err)
{
  const json_node *v = json_get (root, "profiles");

  if (profile_network_read (root, "", &lists[0], err) < 0)
    return -1;
  for (size_t i = 0; json_is_object (v) && i < json_object_len (v); i++)
    {
      const char *name = json_object_key (v, i);
      const json_node *settings = json_object_value (v, i);
      size_t k = 0;

      while (names[k] && strcmp (names[k], name) != 0)
        k++;
      /* An unknown name or a value not an object: the caller says so. */
      if (names[k] == NULL || !json_is_object (settings))
        continue;
      {
        cleanup_free char *prefix = xasprintf ("profiles.%s", name);
        profile_network_lists_free (&lists[1 + k]);
        if (profile_network_read (settings, prefix, &lists[1 + k], err) < 0)
          return -1;
      }
    }
  return 0;
}

int
profile_network_check_scopes (struct profile *const *profiles,
                              const char *const *names,
                              const struct profile_network_lists *lists,
                              struct moat_error **err)
{
  for (size_t i = 0; names[i]; i++)
    {
      cleanup_free char *prefix = xasprintf ("profiles.%s", names[i]);
      size_t n_deny = profiles[i]->n_deny;
      if (profile_network_count (&n_deny, &lists[0], "", err) < 0
          || profile_network_count (&n_deny, &lists[1 + i], prefix, err) < 0)
        return -1;
    }
  return 0;
}

int
profile_network_take_scopes (struct profile *p, const char *name,
                             struct profile_network_lists *lists, int scope,
                             struct moat_error **err)
{
  cleanup_free char *prefix = xasprintf ("profiles.%s", name);

  if (profile_network_take (p, &lists[0], "", err) < 0
      || profile_network_take (p, &lists[scope], prefix, err) < 0)
    return -1;
  memcpy (p->deny_digest, lists[scope].deny_digest, CIDR_LIST_DIGEST_LEN);
  memcpy (p->allow_digest, lists[scope].allow_digest, CIDR_LIST_DIGEST_LEN);
  return 0;
}

/* DIGEST of the lists one after the other where longer than the audit
 * line's head, else "". */
static void
digest_if_long (const struct cidr *const *parts, const size_t *counts,
                size_t n_parts, char digest[CIDR_LIST_DIGEST_LEN])
{
  size_t n = 0;

  for (size_t i = 0; i < n_parts; i++)
    n += counts[i];
  digest[0] = '\0';
  if (n > PROFILE_AUDIT_LIST_HEAD)
    cidr_lists_digest (parts, counts, n_parts, digest);
}

void
profile_network_scope_digests (struct profile *const *profiles,
                               struct profile_network_lists *lists)
{
  for (int k = 0; k + 1 < PROFILE_CONFIG_SCOPES; k++)
    {
      const struct profile *p = profiles[k];
      const struct profile_network_lists *top = &lists[0];
      struct profile_network_lists *own = &lists[1 + k];
      /* As profile_network_take puts them: p's, then each scope's. */
      const struct cidr *deny[] = { p->deny, top->deny, own->deny };
      size_t n_deny[] = { p->n_deny, top->has_deny ? top->n_deny : 0,
                          own->has_deny ? own->n_deny : 0 };
      const struct profile_network_lists *allow
          = own->allow_kind != PROFILE_ALLOW_NONE   ? own
            : top->allow_kind != PROFILE_ALLOW_NONE ? top
                                                    : NULL;
      const struct cidr *allow_list = allow ? allow->allow : p->allow;
      size_t n_allow = allow ? allow->n_allow : p->n_allow;

      digest_if_long (deny, n_deny, 3, own->deny_digest);
      digest_if_long (&allow_list, &n_allow, 1, own->allow_digest);
    }
}

void
profile_network_scopes_free (struct profile_network_lists *lists)
{
  for (int s = 0; s < PROFILE_CONFIG_SCOPES; s++)
    profile_network_lists_free (&lists[s]);
}

/* Could the operator's profile P reach every address (and port) of C?
 * An allowlist: C is inside one of its entries. Otherwise: inside an
 * egress_allow_private entry, or clear of every private range. */
static bool
operator_allows (const struct profile *p, const struct cidr *c)
{
  if (list_contains (p->allow, p->n_allow, c))
    return true;
  return !p->allowlist && !list_overlaps (p->private_nets, p->n_private, c);
}

/* A taken entry that holds metadata addresses: those stay refused (G2),
 * and the pod author is told so, as for any clamp. */
static void
tell_metadata_held (struct override_list *ov, const char *path, const char *tok,
                    const struct cidr *c)
{
  cleanup_free char *held = metadata_held (c);
  if (held == NULL)
    return;
  cleanup_free char *asked = xasprintf ("%s (in %s)", held, tok);
  override_list_add (ov, OVERRIDE_IGNORED, path, asked,
                     "a cloud metadata address, G2");
}

int
profile_network_annotation (struct profile *e, const char *value,
                            struct override_list *ov, struct moat_error **err)
{
  const char *path = "annotations." ANNOTATION;
  cleanup_free char *copy = xstrdup (value);
  cleanup_free struct cidr *list = NULL;
  size_t n = 0;
  char *save = NULL;

  if (!e->egress)
    {
      /* strict passes loopback only: nothing to narrow. */
      override_list_add (ov, OVERRIDE_IGNORED, path, value, "loopback only");
      return 0;
    }
  for (char *tok = strtok_r (copy, ", \t\n", &save); tok;
       tok = strtok_r (NULL, ", \t\n", &save))
    {
      struct cidr c;
      if (cidr_port_parse (tok, &c) < 0)
        {
          override_list_add (ov, OVERRIDE_IGNORED, path, tok,
                             "not a CIDR[:port]");
          continue;
        }
      if (is_metadata (&c))
        {
          override_list_add (ov, OVERRIDE_IGNORED, path, tok,
                             "a cloud metadata address, G2");
          continue;
        }
      if (!operator_allows (e, &c))
        {
          override_list_add (ov, OVERRIDE_IGNORED, path, tok,
                             "outside what the operator allows");
          continue;
        }
      if (n == NETGUARD_MAX_ALLOW)
        return moat_fail (err, 0, "%s: more than %d entries", path,
                          NETGUARD_MAX_ALLOW);
      tell_metadata_held (ov, path, tok, &c);
      cidr_list_add (&list, &n, &c);
    }
  /* An allowlist of what was taken, even if nothing was: the pod author
   * asked for one, and less is always tighter. */
  if (e->lists_borrowed)
    {
      profile_network_dup (e, e);
      e->lists_borrowed = false;
    }
  free (e->allow);
  e->allow_digest[0] = '\0';
  e->allow = steal_pointer (&list);
  e->n_allow = n;
  e->allowlist = true;
  {
    cleanup_free char *taken = profile_network_allow_text (e);
    override_list_add (ov, OVERRIDE_CHANGED, path, value, taken);
  }
  return 0;
}

char *
profile_network_allow_text (const struct profile *p)
{
  cleanup_free char *text = xstrdup ("");
  for (size_t i = 0; i < p->n_allow; i++)
    {
      cleanup_free char *c = cidr_to_string (&p->allow[i]);
      cleanup_free char *held = metadata_held (&p->allow[i]);
      char *next = xasprintf ("%s%s%s%s%s", text, i ? "," : "", c,
                              held ? " except " : "", held ? held : "");
      free (text);
      text = next;
    }
  return steal_pointer (&text);
}

const char *
profile_network_mode (const struct profile *p)
{
  if (!p->egress)
    return "loopback only";
  return p->allowlist ? "allowlist" : "public";
}

/* A list in the audit line: past PROFILE_AUDIT_LIST_HEAD entries, the
 * head, the length and a digest of the whole, so that a create's line
 * stays short (and cheap to write) with 10,000 entries and two lines
 * still tell whether their lists were the same. */
static void
list_digest (const struct profile *p, const struct cidr *list, size_t n,
             char ret[CIDR_LIST_DIGEST_LEN])
{
  const char *taken = list == p->deny && n == p->n_deny     ? p->deny_digest
                      : list == p->allow && n == p->n_allow ? p->allow_digest
                                                            : "";
  if (*taken)
    memcpy (ret, taken, CIDR_LIST_DIGEST_LEN);
  else
    cidr_list_digest (list, n, ret);
}

void
profile_network_take_digests (struct profile *p)
{
  /* Known already where the config cache had them. */
  if (p->n_deny > PROFILE_AUDIT_LIST_HEAD && p->deny_digest[0] == '\0')
    cidr_list_digest (p->deny, p->n_deny, p->deny_digest);
  if (p->n_allow > PROFILE_AUDIT_LIST_HEAD && p->allow_digest[0] == '\0')
    cidr_list_digest (p->allow, p->n_allow, p->allow_digest);
}

static void
jw_cidrs_bounded (struct json_writer *w, const struct profile *p,
                  const char *key, const struct cidr *list, size_t n,
                  bool bounded)
{
  char digest[CIDR_LIST_DIGEST_LEN];

  if (!bounded || n <= PROFILE_AUDIT_LIST_HEAD)
    {
      jw_cidrs (w, key, list, n, 0);
      return;
    }
  jw_cidrs (w, key, list, PROFILE_AUDIT_LIST_HEAD, 0);
  {
    cleanup_free char *count_key = xasprintf ("%s_count", key);
    jw_key (w, count_key);
    jw_uint (w, n);
  }
  list_digest (p, list, n, digest);
  {
    cleanup_free char *digest_key = xasprintf ("%s_digest", key);
    jw_key (w, digest_key);
    jw_string (w, digest);
  }
}

void
profile_write_joined_list (struct json_writer *w, const struct profile *p,
                           const struct cidr *list, size_t n)
{
  char digest[CIDR_LIST_DIGEST_LEN];
  cleanup_free char *head = NULL;

  if (n <= PROFILE_AUDIT_LIST_HEAD)
    {
      cleanup_free char *text = cidr_list_join (list, n);
      jw_string (w, text);
      return;
    }
  head = cidr_list_join (list, PROFILE_AUDIT_LIST_HEAD);
  list_digest (p, list, n, digest);
  jw_object_begin (w);
  jw_key (w, "head");
  jw_string (w, head);
  jw_key (w, "count");
  jw_uint (w, n);
  jw_key (w, "digest");
  jw_string (w, digest);
  jw_object_end (w);
}

void
profile_network_json (struct json_writer *w, const struct profile *p,
                      const struct cidr *dns, size_t n_dns, bool with_dns,
                      bool bounded)
{
  jw_object_begin (w);
  jw_key (w, "mode");
  jw_string (w, profile_network_mode (p));
  jw_cidrs_bounded (w, p, "deny", p->deny, p->n_deny, bounded);
  if (p->egress)
    {
      jw_cidrs_bounded (w, p, p->allowlist ? "allow" : "allow_private",
                        p->allow, p->n_allow, bounded);
      if (!p->allowlist)
        jw_cidrs (w, "private_refused", p->private_nets, p->n_private, 0);
      if (with_dns)
        jw_cidrs (w, "dns", dns, n_dns, 53);
      else
        {
          jw_key (w, "dns");
          jw_string (w, "the nameservers of the container's resolv.conf, "
                        "port 53");
        }
      jw_key (w, "ipv6_embeddings_refused");
      jw_string (w, "::ffff:0:0/96, ::/96, 64:ff9b::/96, 2002::/16 forms of "
                    "every refused IPv4 range");
    }
  jw_object_end (w);
}

void
profile_netguard_rules (const struct profile *p, const struct cidr *dns,
                        size_t n_dns, struct netguard_rules *ret)
{
  *ret = (struct netguard_rules){
    .egress = p->egress,
    .deny = p->deny,
    .n_deny = p->n_deny,
    .deny_digest = p->deny_digest,
  };
  if (!p->egress)
    return;
  ret->allow = p->allow;
  ret->n_allow = p->n_allow;
  ret->allow_digest = p->allow_digest;
  ret->dns = dns;
  ret->n_dns = n_dns;
  ret->allowlist = p->allowlist;
  if (!p->allowlist)
    {
      ret->private_nets = p->private_nets;
      ret->n_private = p->n_private;
    }
}
