// Package dnszone decides what Anvil's DNS says: the rules MAAS applies to
// domains, DNS resources and their records, and the zones built from them
// and from the machines' addresses. It is pure: Build turns plain data into
// an immutable Zones that a server reads from many goroutines without locks,
// and a new Zones replaces the old one whole.
package dnszone
