package store

import "github.com/anvilmetal/anvil/internal/dnszone"

// DNSSearch is the search list for a machine whose domain is first ("" is
// the default domain): dnszone.SearchList over the stored domains.
func DNSSearch(domains []Domain, first string) []string {
	var auth []string
	def := dnszone.DefaultDomain
	for _, d := range domains {
		if d.Authoritative {
			auth = append(auth, d.Name)
		}
		if d.Default {
			def = d.Name
		}
	}
	if first == "" {
		first = def
	}
	return dnszone.SearchList(first, auth)
}
