// Package dnssec validates the answers Anvil's DNS forwards (RFC 4033-4035):
// every RRset's signatures are checked with keys trusted along the chain
// of DS records from a trust anchor (the root KSK, key tag 20326, unless
// told otherwise), asked of the upstream resolver itself. An answer is
// Secure (all of it signed and verified), Insecure (a part lies below a
// delegation the signed parent provably does not sign: NSEC or NSEC3
// denying its DS) or Bogus (anything else). Keys, and proofs that a zone
// is unsigned, are cached for their records' TTL.
package dnssec
