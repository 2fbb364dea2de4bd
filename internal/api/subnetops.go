package api

import (
	"math/big"
	"net/http"
	"net/netip"
	"strings"

	"github.com/anvilmetal/anvil/internal/network"
	"github.com/anvilmetal/anvil/internal/store"
)

// A subnet's ops, as MAAS computes them from the network model: what is
// in use (reserved_ip_ranges), what is free (unreserved_ip_ranges), the
// figures of both (statistics), and the addresses assigned
// (ip_addresses).

func init() {
	addDocs(map[string]string{
		"SubnetHandler reserved_ip_ranges":   doc("List the subnet's addresses in use, with what each span is for (gateway-ip, dns-server, dynamic, reserved, assigned-ip)."),
		"SubnetHandler unreserved_ip_ranges": doc("List the subnet's free addresses."),
		"SubnetHandler statistics": doc("Figures of the subnet's use.", with("",
			[]string{opt("include_ranges", "boolean", "Include the spans in use and free."),
				opt("include_suggestions", "boolean", "Accepted for MAAS's clients; Anvil suggests nothing.")})...),
		"SubnetHandler ip_addresses": doc("List the addresses assigned on the subnet.", with("",
			[]string{opt("with_username", "boolean", "Include the owner's name (the default)."),
				opt("with_summary", "boolean", "Accepted for MAAS's clients.")})...),
	})
}

type spanJSON struct {
	Start        string   `json:"start"`
	End          string   `json:"end"`
	Purpose      []string `json:"purpose,omitempty"`
	NumAddresses *big.Int `json:"num_addresses"`
}

func renderSpans(spans []network.Span, purpose bool) []spanJSON {
	out := make([]spanJSON, 0, len(spans))
	for _, sp := range spans {
		j := spanJSON{Start: sp.Start.String(), End: sp.End.String(), NumAddresses: sp.Size()}
		if purpose {
			j.Purpose = sp.Purposes
		}
		out = append(out, j)
	}
	return out
}

// subnetUse loads what the ops compute from: the model, the subnet in
// it, and the addresses assigned on it.
func (s *Server) subnetUse(r *request, sn store.Subnet) (*network.Network, network.Subnet, []store.IPAddress, []netip.Addr, error) {
	n, err := s.store.LoadNetwork(r.Context())
	if err != nil {
		return nil, network.Subnet{}, nil, nil, err
	}
	rows, err := s.store.ListIPAddresses(r.Context(), store.IPAddressFilter{SubnetID: sn.ID})
	if err != nil {
		return nil, network.Subnet{}, nil, nil, err
	}
	var assigned []netip.Addr
	for _, a := range rows {
		if ip, err := netip.ParseAddr(a.IP); err == nil {
			assigned = append(assigned, ip)
		}
	}
	return n, store.NetworkSubnet(sn), rows, assigned, nil
}

func (s *Server) subnetOps(byID func(*request) (store.Subnet, error)) []route {
	spans := func(unused bool) handlerFunc {
		return func(w http.ResponseWriter, r *request) error {
			sn, err := byID(r)
			if err != nil {
				return err
			}
			n, ns, _, assigned, err := s.subnetUse(r, sn)
			if err != nil {
				return err
			}
			if unused {
				writeJSON(w, http.StatusOK, renderSpans(network.Unused(n, ns, assigned), false))
			} else {
				writeJSON(w, http.StatusOK, renderSpans(network.InUse(n, ns, assigned), true))
			}
			return nil
		}
	}
	return []route{
		get("reserved_ip_ranges", authenticated, spans(false)),
		get("unreserved_ip_ranges", authenticated, spans(true)),
		get("statistics", authenticated, func(w http.ResponseWriter, r *request) error {
			sn, err := byID(r)
			if err != nil {
				return err
			}
			n, ns, _, assigned, err := s.subnetUse(r, sn)
			if err != nil {
				return err
			}
			ranges, err := boolParam(r, "include_ranges")
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, statistics(n, ns, assigned, ranges))
			return nil
		}),
		get("ip_addresses", authenticated, func(w http.ResponseWriter, r *request) error {
			sn, err := byID(r)
			if err != nil {
				return err
			}
			_, _, rows, _, err := s.subnetUse(r, sn)
			if err != nil {
				return err
			}
			withUser, err := boolDefault(r, "with_username", true)
			if err != nil {
				return err
			}
			withSummary, err := boolDefault(r, "with_summary", true)
			if err != nil {
				return err
			}
			if old, err := boolDefault(r, "with_node_summary", true); err != nil {
				return err
			} else if !old {
				withSummary = false
			}
			out := []map[string]any{}
			for _, a := range rows {
				if a.IP != "" {
					out = append(out, relatedIP(a, withUser, withSummary))
				}
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}),
	}
}

// relatedIP is one address as a subnet's ip_addresses lists it (MAAS's
// StaticIPAddress.render_json): the owner's name when known, and of a
// link its node and interface; a node's owner takes precedence.
func relatedIP(a store.IPAddress, withUser, withSummary bool) map[string]any {
	j := map[string]any{"ip": a.IP, "alloc_type": a.AllocType, "created": a.Created.UTC().Format(maasTime),
		"updated": a.Updated.UTC().Format(maasTime)}
	if withUser && a.Owner != "" {
		j["user"] = a.Owner
	}
	if withSummary && a.Node.SystemID != "" {
		j["node_summary"] = map[string]any{"system_id": a.Node.SystemID, "node_type": 0, "hostname": a.Node.Hostname,
			"fqdn": a.Node.Hostname + ".maas", "is_container": false, "via": a.Node.Interface}
		if withUser && a.Node.Owner != "" && a.AllocType != store.AllocDiscovered {
			j["user"] = a.Node.Owner
		}
	}
	return j
}

// boolDefault reads a boolean parameter that is def when not given.
func boolDefault(r *request, name string, def bool) (bool, error) {
	if strings.TrimSpace(r.form.Get(name)) == "" {
		return def, nil
	}
	return boolParam(r, name)
}

// statistics is MAAS's IPRangeStatistics of a subnet: its host addresses,
// how many are free, the largest free span, and the share in use.
func statistics(n *network.Network, s network.Subnet, assigned []netip.Addr, ranges bool) map[string]any {
	u := network.Use(n, s, assigned)
	usage, unavail := u.Usage, u.Unavailable()
	lo, hi := network.HostBounds(s.CIDR)
	out := map[string]any{
		"num_available": u.Available, "largest_available": u.Largest, "num_unavailable": unavail, "total_addresses": u.Total,
		"usage": usage, "usage_string": sprintf("%.0f%%", usage*100), "available_string": sprintf("%.0f%%", (1-usage)*100),
		"first_address": lo.String(), "last_address": hi.String(), "ip_version": map[bool]int{true: 4, false: 6}[s.CIDR.Addr().Is4()],
	}
	if ranges {
		out["ranges"] = append(renderSpans(network.InUse(n, s, assigned), true), renderSpans(network.Unused(n, s, assigned), true)...)
	}
	return out
}

// allocTypeName is MAAS's IPADDRESS_TYPE name.
func allocTypeName(t int) string {
	switch t {
	case store.AllocAuto:
		return "Automatic"
	case store.AllocSticky:
		return "Sticky"
	case store.AllocUserReserved:
		return "User reserved"
	case store.AllocDHCP:
		return "DHCP"
	case store.AllocDiscovered:
		return "Discovered"
	}
	return "Unknown"
}
