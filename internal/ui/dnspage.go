package ui

import (
	"cmp"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	mdns "github.com/miekg/dns"

	"github.com/anvilmetal/anvil/internal/dns"
	"github.com/anvilmetal/anvil/internal/dnszone"
	"github.com/anvilmetal/anvil/internal/store"
)

// domainRow is a domain with how many names people gave it and how many
// records its zone holds (machines' generated ones included).
type domainRow struct {
	store.Domain
	Resources, Records int
}

// rrRow is one record as the racks serve it.
type rrRow struct {
	Name, Type, Data string
	TTL              uint32
}

// addedRecord is a record stored through dnsresourcerecords/ (or an
// address of a resource from dnsresources/), which an admin may delete.
type addedRecord struct {
	Name, Type, Data string
	// API is what deletes it: "dnsresourcerecords/ID/", or for an
	// address "dnsresources/ID/", which deletes the name with all its
	// records, as MAAS does; Confirm says so.
	API, Confirm string
}

// lookup is the lookup box's answer.
type lookup struct {
	Name, Type string
	Rcode      string
	Answer     []rrRow
	Authority  []rrRow
	Note       string
}

type dnsData struct {
	Domains []domainRow
	Domain  domainRow // the one whose records are listed
	Records []rrRow
	// MoreRecords is how many served records are not listed.
	MoreRecords int
	Added       []addedRecord
	Types       []string // what an admin may add
	// LookupTypes are what the lookup box asks for.
	LookupTypes []string
	Lookup      *lookup
}

// servedShown bounds the served records listed: a domain of thousands
// of machines is answered by the lookup box, not read as a page.
const servedShown = 500

// recordTypes are what dnsresourcerecords/ stores; addresses (A, AAAA)
// go to dnsresources/.
var recordTypes = []string{"CNAME", "MX", "NS", "SRV", "SSHFP", "TXT"}

var lookupTypes = []string{"A", "AAAA", "CNAME", "MX", "NS", "PTR", "SOA", "SRV", "SSHFP", "TXT", "ANY"}

func rrRowOf(rr mdns.RR) rrRow {
	h := rr.Header()
	data := strings.TrimPrefix(rr.String(), h.String())
	return rrRow{Name: h.Name, Type: mdns.TypeToString[h.Rrtype], TTL: h.Ttl, Data: data}
}

// dnsPage lists the domains, the records of one (?domain=NAME, the
// default domain otherwise) as the racks serve them, and answers a name
// (?q=NAME&type=T) from the same zones the racks answer from, as a rack
// answers a client outside every managed network and ACL, and without
// forwarding anything.
func (s *Server) dnsPage(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	ctx := r.Context()
	doms, err := s.store.ListDomains(ctx)
	if err != nil {
		return "", fmt.Errorf("domains: %w", err)
	}
	res, err := s.store.ListDNSResources(ctx)
	if err != nil {
		return "", fmt.Errorf("dns resources: %w", err)
	}
	data, err := s.store.ListDNSData(ctx)
	if err != nil {
		return "", fmt.Errorf("dns records: %w", err)
	}
	var served dns.Data
	if s.opts.DNS != nil {
		if served, err = s.opts.DNS(ctx); err != nil {
			return "", err
		}
	}
	served.Upstream = nil
	zones := dnszone.Build(served.Zones)
	d := dnsData{Types: recordTypes, LookupTypes: lookupTypes}
	want := r.URL.Query().Get("domain")
	for _, dom := range doms {
		row := domainRow{Domain: dom}
		for _, rs := range res {
			if rs.DomainID == dom.ID {
				row.Resources++
			}
		}
		if z := zones.Find(dom.Name); z != nil && z.Name == mdns.CanonicalName(dom.Name) {
			row.Records = z.Len()
		}
		d.Domains = append(d.Domains, row)
		if strings.EqualFold(dom.Name, want) || (want == "" && dom.Default) {
			d.Domain = row
		}
	}
	if want != "" && d.Domain.Name == "" {
		return "", fmt.Errorf("domain %q: %w", want, store.ErrNotFound)
	}
	slices.SortFunc(d.Domains, func(a, b domainRow) int { return cmp.Compare(a.Name, b.Name) })
	if z := zones.Find(d.Domain.Name); z != nil && z.Name == mdns.CanonicalName(d.Domain.Name) {
		all := z.Transfer()
		all = all[:len(all)-1] // the transfer ends with the SOA again
		if len(all) > servedShown {
			d.MoreRecords, all = len(all)-servedShown, all[:servedShown]
		}
		for _, rr := range all {
			d.Records = append(d.Records, rrRowOf(rr))
		}
	}
	for _, rs := range res {
		if rs.DomainID != d.Domain.ID {
			continue
		}
		name := rs.Name
		for _, ip := range rs.IPs {
			t := "A"
			if a, err := netip.ParseAddr(ip); err == nil && a.Is6() {
				t = "AAAA"
			}
			d.Added = append(d.Added, addedRecord{Name: name, Type: t, Data: ip, API: fmt.Sprintf("dnsresources/%d/", rs.ID),
				Confirm: fmt.Sprintf("Delete the name %s with all its addresses and records?", name)})
		}
		for _, x := range data {
			if x.ResourceID == rs.ID {
				d.Added = append(d.Added, addedRecord{Name: name, Type: x.Type, Data: x.Data, API: fmt.Sprintf("dnsresourcerecords/%d/", x.ID),
					Confirm: fmt.Sprintf("Delete %s %s %s?", name, x.Type, x.Data)})
			}
		}
	}
	if q := strings.TrimSpace(r.URL.Query().Get("q")); q != "" {
		if d.Lookup, err = answerName(served, q, r.URL.Query().Get("type")); err != nil {
			return "", err
		}
	}
	v.Title, v.Nav, v.Data = "DNS", "dns", d
	return "dns.html", nil
}

// answerName asks a DNS server holding served what a rack would answer.
func answerName(served dns.Data, name, qtype string) (*lookup, error) {
	qtype = strings.ToUpper(cmp.Or(strings.TrimSpace(qtype), "A"))
	t, ok := mdns.StringToType[qtype]
	if !ok || !slices.Contains(lookupTypes, qtype) {
		return nil, badRequest("unknown record type " + qtype)
	}
	if _, ok := mdns.IsDomainName(name); !ok || len(name) > 253 {
		return nil, badRequest("not a DNS name: " + name)
	}
	srv := dns.New(nil)
	srv.Set(served)
	q := new(mdns.Msg)
	q.SetQuestion(mdns.Fqdn(name), t)
	m := srv.Answer(q, netip.MustParseAddr("127.0.0.1"))
	l := &lookup{Name: mdns.Fqdn(name), Type: qtype, Rcode: mdns.RcodeToString[m.Rcode]}
	for _, rr := range m.Answer {
		l.Answer = append(l.Answer, rrRowOf(rr))
	}
	for _, rr := range m.Ns {
		l.Authority = append(l.Authority, rrRowOf(rr))
	}
	switch {
	case m.Rcode == mdns.RcodeRefused:
		l.Note = "This name is in none of Anvil's zones: the racks refuse it (or forward it, for clients on managed subnets when upstream_dns is set)."
	case m.Rcode == mdns.RcodeNameError:
		l.Note = "No such name in the zone."
	case len(l.Answer) == 0:
		l.Note = "The name exists but has no " + qtype + " record."
	}
	return l, nil
}
