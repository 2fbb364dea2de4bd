package store

import (
	"encoding/json"
	"net/netip"
)

// Addresses are the rack's own: those on its interfaces as it last
// reported them, and those it answers DNS at. No machine may be given one
// (MAAS counts a controller's addresses as in use the same way); a
// report that does not parse adds nothing.
func (r Rack) Addresses() []netip.Addr {
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
