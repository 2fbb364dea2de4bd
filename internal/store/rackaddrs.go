package store

import (
	"encoding/json"
	"net/netip"
)

// Trusts says whether an address the rack says is its own may count as
// such: a rack that called with an administrator's key (not enrolled)
// is trusted as that administrator; an enrolled rack only within the
// subnets it serves (Served). Otherwise a rack could claim any address,
// using up another subnet's addresses or being offered to machines as
// their DNS server.
func (r Rack) Trusts(a netip.Addr) bool {
	if !r.Enrolled {
		return true
	}
	a = a.Unmap().WithZone("")
	for _, p := range r.Served {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Addresses are the rack's own: those on its interfaces as it last
// reported them, and those it answers DNS at, that it is trusted with
// (Trusts). No machine may be given one (MAAS counts a controller's
// addresses as in use the same way); a report that does not parse adds
// nothing.
func (r Rack) Addresses() []netip.Addr {
	var out []netip.Addr
	for _, a := range r.ReportedAddresses() {
		if r.Trusts(a) {
			out = append(out, a)
		}
	}
	return out
}

// ReportedAddresses are the addresses the rack reported as its own,
// trusted or not: on its interfaces, and where it answers DNS.
func (r Rack) ReportedAddresses() []netip.Addr {
	var rep struct {
		Interfaces []struct {
			Addresses []string `json:"addresses"`
		} `json:"interfaces"`
	}
	var out []netip.Addr
	if r.Report != "" && json.Unmarshal([]byte(r.Report), &rep) == nil {
		for _, i := range rep.Interfaces {
			for _, a := range i.Addresses {
				if p, err := netip.ParsePrefix(a); err == nil {
					out = append(out, p.Addr())
				}
			}
		}
	}
	for _, a := range r.DNS {
		if ip, err := netip.ParseAddr(a); err == nil {
			out = append(out, ip)
		}
	}
	return out
}

// DNSAddresses are the addresses the rack answers DNS at that it is
// trusted with (Trusts): those machines may be given as nameservers.
func (r Rack) DNSAddresses() []netip.Addr {
	var out []netip.Addr
	for _, s := range r.DNS {
		if a, err := netip.ParseAddr(s); err == nil && r.Trusts(a) {
			out = append(out, a)
		}
	}
	return out
}
