/* CIDRs as the policy reads them from the operator config, the saved
 * decision keeps them and the network guard enforces them: a pure type and
 * its arithmetic (no I/O, no mechanism, no judgement), shared by the policy
 * (profile_network.c), the decision (oci/decision.c) and the guard
 * (netguard*.c). */
#ifndef MOAT_CIDR_H
#define MOAT_CIDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cidr
{
  int family;       /* AF_INET or AF_INET6 */
  uint8_t addr[16]; /* network byte order; v4 in the first 4 bytes */
  uint8_t prefix;
  uint16_t port; /* allow entries: 0 any port, else only this one */
};

/* Parse "10.0.0.0/8", "fd00:ec2::254/128", "169.254.169.254" (host). */
int cidr_parse (const char *s, struct cidr *ret);
/* The same with an optional port: "10.0.0.0/8:443", "1.2.3.4:53",
 * "[2001:db8::/32]:443" (brackets for IPv6 with a port). */
int cidr_port_parse (const char *s, struct cidr *ret);
/* "10.0.0.0/8", "[2001:db8::/32]:443"; malloc'ed. */
char *cidr_to_string (const struct cidr *c);
/* The same into buf, without an allocation; returns its length. */
#define CIDR_TEXT_MAX (1 + 46 + 5 + 1 + 6 + 1) /* [v6/128]:65535 and NUL */
size_t cidr_format (const struct cidr *c, char buf[CIDR_TEXT_MAX]);
/* A list as one string, "10.0.0.0/8,1.2.3.4/32:53" (malloc'ed), and back
 * (an empty string is an empty list; on failure, *ret_n is the index of the
 * entry at fault): a long list saved as one JSON string costs a reader one
 * node, not one per entry. */
char *cidr_list_join (const struct cidr *list, size_t n);
int cidr_list_split (const char *text, bool with_port, struct cidr **ret,
                     size_t *ret_n);
/* An entry as bytes, field by field (struct cidr has padding): its family
 * (4 or 6), prefix, port (big-endian) and 16 address bytes. */
#define CIDR_PACKED_LEN 20
void cidr_pack (const struct cidr *c, uint8_t out[CIDR_PACKED_LEN]);
/* A digest of a list, for a record that cannot hold the list itself:
 * "words64:" and 16 hex digits of hash64_words (lib/util.h) over each
 * entry packed as above, in order. Names the list, is no security
 * boundary. */
#define CIDR_LIST_DIGEST_LEN (sizeof ("words64:") + 16)
void cidr_list_digest (const struct cidr *list, size_t n,
                       char ret[CIDR_LIST_DIGEST_LEN]);
/* The same of the lists one after the other, as if one list. */
void cidr_lists_digest (const struct cidr *const *lists, const size_t *counts,
                        size_t n_lists, char ret[CIDR_LIST_DIGEST_LEN]);
/* Every address of inner (and its port, if outer names one) is in outer. */
bool cidr_contains (const struct cidr *outer, const struct cidr *inner);
bool cidr_overlaps (const struct cidr *x, const struct cidr *y);

/* The IPv6 forms that carry the IPv4 network v4: IPv4-mapped
 * (::ffff:0:0/96), IPv4-compatible (::/96), NAT64 (64:ff9b::/96) and 6to4
 * (2002::/16, the address at bits 16-47). Fills out[CIDR_V6_EMBEDDINGS]. */
#define CIDR_V6_EMBEDDINGS 4
void cidr_v6_embeddings (const struct cidr *v4,
                         struct cidr out[CIDR_V6_EMBEDDINGS]);
/* The other way: the IPv4 host address an IPv6 host address (prefix 128)
 * carries in one of those forms, in *ret_v4 (prefix 32, same port). False
 * for an address in none of them, or not a host address. */
bool cidr_v6_embedded_v4 (const struct cidr *v6, struct cidr *ret_v4);

#endif
