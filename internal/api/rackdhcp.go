package api

import (
	"encoding/json"
	"net/http"
	"net/netip"
	"time"

	"github.com/anvilmetal/anvil/internal/dhcpshare"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/network"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/store"
)

// Two racks on one VLAN (its primary_rack and secondary_rack) share its
// DHCP: the region streams each rack its own share of every dynamic range
// (package dhcpshare decides), takes the leases each reports on those
// subnets (rack/ op=dhcp_leases) and streams each the other's, so the
// survivor confirms the addresses the other handed out.

// shareSubnet narrows rsn, as streamed to rack rackID, to that rack's
// share on a VLAN with racks v. Ranges that do not parse are left for
// the rack to refuse, as before.
func shareSubnet(rsn *rack.Subnet, v store.VLAN, rackID string) {
	racks := dhcpshare.Racks{Primary: v.PrimaryRack, Secondary: v.SecondaryRack}
	role := dhcpshare.RoleOf(racks, rackID)
	if role == dhcpshare.Any {
		return
	}
	rsn.Role = role.String()
	var dyn []dhcpshare.Range
	for _, r := range rsn.Dynamic {
		a, err1 := netip.ParseAddr(r[0])
		b, err2 := netip.ParseAddr(r[1])
		if err1 != nil || err2 != nil {
			return
		}
		dyn = append(dyn, dhcpshare.Range{Start: a, End: b})
	}
	sh := dhcpshare.ShareOf(racks, rackID, dyn)
	rsn.DHCP = rsn.DHCP && sh.Serve
	rsn.Dynamic, rsn.Peer = rangeStrings(sh.Own), rangeStrings(sh.Peer)
}

func rangeStrings(rs []dhcpshare.Range) [][2]string {
	var out [][2]string
	for _, r := range rs {
		out = append(out, [2]string{r.Start.String(), r.End.String()})
	}
	return out
}

// peerLeases are the other racks' active leases on the subnets rackID
// serves as primary or secondary; nil when it serves none, without
// reading the leases. Every other rack's count, not only the partner's:
// a rack that was secondary a moment ago still has clients.
func (s *Server) peerLeases(r *request, rackID string, subnets []rack.Subnet) ([]rack.Lease, error) {
	shared := map[string]bool{}
	for _, sn := range subnets {
		if sn.Role == dhcpshare.Primary.String() || sn.Role == dhcpshare.Secondary.String() {
			shared[sn.CIDR] = true
		}
	}
	if len(shared) == 0 {
		return nil, nil
	}
	ls, err := s.store.RackLeases(r.Context(), time.Now())
	if err != nil {
		return nil, err
	}
	out := []rack.Lease{}
	for _, l := range ls {
		if l.RackID != rackID && shared[l.Subnet] {
			out = append(out, rack.Lease{MAC: l.MAC, IP: l.IP, Subnet: l.Subnet, Expires: l.Expires.UTC()})
		}
	}
	return out, nil
}

// dhcpLeases records the leases a rack holds on subnets with a role: its
// whole set, replacing the last. Every lease is checked before anything
// is stored.
func (s *Server) dhcpLeases(w http.ResponseWriter, r *request) error {
	var in []rack.Lease
	if err := json.Unmarshal([]byte(r.form.Get("leases")), &in); err != nil {
		return badField("leases", "must be a JSON array of leases: %v", err)
	}
	if len(in) > rack.MaxLeaseReport {
		return badField("leases", "at most %d leases per report", rack.MaxLeaseReport)
	}
	out := make([]store.RackLease, 0, len(in))
	seen := map[string]bool{}
	now := time.Now()
	for i, l := range in {
		mac, err := machine.NormaliseMAC(l.MAC)
		if err != nil {
			return badField("leases", "lease %d: %v", i, err)
		}
		ip, err := netip.ParseAddr(l.IP)
		if err != nil || !ip.Is4() {
			return badField("leases", "lease %d: %q is not an IPv4 address", i, l.IP)
		}
		sn, err := netip.ParsePrefix(l.Subnet)
		if err != nil || sn != sn.Masked() || !sn.Contains(ip) {
			return badField("leases", "lease %d: %q is not a network holding %s", i, l.Subnet, ip)
		}
		if l.Expires.IsZero() {
			return badField("leases", "lease %d: no expiry", i)
		}
		// No lease outlives the longest lease time (a day's slack for
		// clocks): a later expiry would hold the address for the other
		// racks for good.
		if l.Expires.After(now.Add(time.Duration(network.MaxLeaseSeconds)*time.Second + 24*time.Hour)) {
			return badField("leases", "lease %d: expires %s, later than any lease time", i, l.Expires.UTC().Format(time.RFC3339))
		}
		if seen[mac] {
			return badField("leases", "lease %d: %s has another lease in this report", i, mac)
		}
		seen[mac] = true
		out = append(out, store.RackLease{MAC: mac, IP: ip.String(), Subnet: sn.String(), Expires: l.Expires})
	}
	out, err := s.servedLeases(r, out)
	if err != nil {
		return err
	}
	if err := s.store.SetRackLeases(r.Context(), rackOf(r).SystemID, out, now); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]int{"leases": len(out)})
	return nil
}

// leaseFeed sends a rack the other racks' leases when they change: read
// at most once a second (a lease a rack just gave out matters to its
// partner only once the first rack is gone), and always once per stream.
type leaseFeed struct {
	at   time.Time
	sent string
}

const leasesEvery = time.Second

func (f *leaseFeed) step(s *Server, r *request, rackID string, subnets []rack.Subnet, send func(rack.Change)) error {
	if !f.at.IsZero() && time.Since(f.at) < leasesEvery {
		return nil
	}
	f.at = time.Now()
	ls, err := s.peerLeases(r, rackID, subnets)
	if err != nil {
		return err
	}
	if ls == nil {
		ls = []rack.Lease{}
	}
	if b, _ := json.Marshal(ls); string(b) != f.sent {
		send(rack.Change{Leases: &ls})
		f.sent = string(b)
	}
	return nil
}
