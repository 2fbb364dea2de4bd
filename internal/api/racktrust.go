package api

import (
	"context"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/powerroute"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/store"
)

// What an enrolled rack is trusted with. A rack holds its own credential,
// so what it says about itself is its word only: the BMC networks it
// claims power work for are narrowed to those an administrator granted it
// and the subnets it serves, and the addresses it reports as its own
// count only within the subnets it serves (store.Rack.Trusts). A rack
// that calls with an administrator's key is trusted as that
// administrator.

func init() {
	addDocs(map[string]string{
		"RackControllerHandler update": doc("Set what an enrolled rack is trusted with (admin only).",
			"granted_bmc_networks: networks (CIDRs, repeatable; one empty value for none) whose BMCs the rack may power; the networks it declares with --bmc-network are narrowed to these and the subnets it serves, and it is given no other BMC's password.",
			"served_subnets: subnets (CIDRs, repeatable; one empty value for none; \"reported\" for those holding the addresses of its last report) confirmed as served by the rack, besides the subnets of the VLANs it is primary or secondary rack of. Only addresses in them count as the rack's own (taken, offered as DNS servers).",
			"A field not sent is left as it is. Answers the rack."),
	})
}

// allowedFresh is how long what a rack may act on is kept between its
// claims (a rack's workers claim often); a grant changed through another
// region applies after it, through this one at once.
const allowedFresh = time.Second

// allowedAt is what a rack may act on, as read at a time.
type allowedAt struct {
	nets []netip.Prefix
	at   time.Time
}

// rackAllowed are the networks an enrolled rack may act on: the BMC
// networks granted to it and the subnets it serves. trusted is true for
// a rack calling with an administrator's key.
func (s *Server) rackAllowed(ctx context.Context, r *request) (allowed []netip.Prefix, trusted bool, err error) {
	c := r.who.rack
	if c == nil {
		return nil, true, nil
	}
	if v, ok := s.allowed.Load(c.RackID); ok && time.Since(v.(allowedAt).at) < allowedFresh {
		return v.(allowedAt).nets, false, nil
	}
	k, err := s.rackByID(ctx, c.RackID)
	if err != nil {
		return nil, false, err
	}
	granted, _ := powerroute.ParseNetworks(k.BMCNetworks) // stored by GrantRack, checked there
	allowed = append(granted, k.Served...)
	s.allowed.Store(c.RackID, allowedAt{nets: allowed, at: time.Now()})
	return allowed, false, nil
}

// rackByID reads one rack as the store lists it (with what it serves).
func (s *Server) rackByID(ctx context.Context, id string) (store.Rack, error) {
	racks, err := s.store.ListRacks(ctx)
	if err != nil {
		return store.Rack{}, err
	}
	for _, k := range racks {
		if k.SystemID == id {
			return k, nil
		}
	}
	return store.Rack{}, store.ErrNotFound
}

// claimNetworks are the networks a power claim may be served for: those
// the rack declares, narrowed to what it is allowed. What it declares
// beyond is ignored and logged (once per change, as claims repeat).
func (s *Server) claimNetworks(r *request, rackID string, declared []netip.Prefix) ([]netip.Prefix, error) {
	allowed, trusted, err := s.rackAllowed(r.Context(), r)
	if err != nil || trusted {
		return declared, err
	}
	kept, beyond := powerroute.Narrow(declared, allowed)
	if len(beyond) > 0 {
		s.warnOnce("claim:"+rackID, strings.Join(powerroute.Strings(beyond), ","), "rack declares BMC networks it was not granted; they are ignored",
			"rack_id", rackID, "declared", powerroute.Strings(declared), "beyond", powerroute.Strings(beyond),
			"reaches", powerroute.Strings(kept), "hint", "an administrator grants BMC networks with PUT rackcontrollers/<id>/ granted_bmc_networks")
	}
	return kept, nil
}

// noteReportAddresses logs addresses a rack reports as its own outside
// the subnets it serves: they are kept in its report but not counted.
func (s *Server) noteReportAddresses(r *request, k store.Rack) {
	if r.who.rack == nil {
		return
	}
	stored, err := s.rackByID(r.Context(), k.SystemID)
	if err != nil {
		return
	}
	k.Enrolled, k.Served = true, stored.Served
	var out []string
	for _, a := range k.ReportedAddresses() {
		if !k.Trusts(a) && !a.IsLinkLocalUnicast() && !slices.Contains(out, a.String()) {
			out = append(out, a.String())
		}
	}
	if len(out) > 0 {
		s.warnOnce("report:"+k.SystemID, strings.Join(out, ","), "rack reports addresses outside the subnets it serves; they are not counted as its own",
			"rack_id", k.SystemID, "addresses", out, "hint", "an administrator confirms served subnets with PUT rackcontrollers/<id>/ served_subnets")
	}
}

// servedLeases keeps of an enrolled rack's DHCP leases those in subnets
// it serves: the others would reach its partner racks as addresses in
// use. What it reports beyond is ignored and logged.
func (s *Server) servedLeases(r *request, ls []store.RackLease) ([]store.RackLease, error) {
	if r.who.rack == nil {
		return ls, nil
	}
	k, err := s.rackByID(r.Context(), r.who.rack.RackID)
	if err != nil {
		return nil, err
	}
	var kept []store.RackLease
	var beyond []string
	for _, l := range ls {
		if ip, err := netip.ParseAddr(l.IP); err == nil && k.Trusts(ip) {
			kept = append(kept, l)
		} else {
			beyond = append(beyond, l.IP)
		}
	}
	if len(beyond) > 0 {
		s.warnOnce("leases:"+k.SystemID, strings.Join(beyond, ","), "rack reports DHCP leases outside the subnets it serves; they are ignored",
			"rack_id", k.SystemID, "addresses", beyond)
	}
	return kept, nil
}

// warnOnce logs msg for key unless the last one logged for key said the
// same (what).
func (s *Server) warnOnce(key, what, msg string, args ...any) {
	if last, ok := s.warned.Swap(key, what); ok && last == what {
		return
	}
	s.log.Warn(msg, args...)
}

// grantRack is PUT rackcontrollers/<id>/: what the rack is trusted with.
func (s *Server) grantRack(w http.ResponseWriter, r *request) error {
	k, err := s.rackByID(r.Context(), r.id)
	if err != nil {
		return err
	}
	if !k.Enrolled {
		return &statusError{code: http.StatusConflict, msg: "Rack " + k.Hostname + " is not enrolled: it calls with an administrator's key and is trusted as one."}
	}
	var g store.RackGrant
	if vs, ok := r.form["granted_bmc_networks"]; ok {
		nets, err := powerroute.ParseNetworks(vs)
		if err != nil {
			return badField("granted_bmc_networks", "%v", err)
		}
		g.BMCNetworks = append([]string{}, powerroute.Strings(nets)...)
	}
	if vs, ok := r.form["served_subnets"]; ok {
		if g.Subnets, err = s.servedSubnets(r.Context(), k, vs); err != nil {
			return err
		}
	}
	if err := s.store.GrantRack(r.Context(), k.SystemID, g); err != nil {
		return err
	}
	s.allowed.Delete(k.SystemID)
	s.log.Info("rack grant changed", "system_id", k.SystemID, "by", r.who.user.Name,
		"granted_bmc_networks", g.BMCNetworks, "served_subnets", g.Subnets)
	racks, err := s.racks(r)
	if err != nil {
		return err
	}
	for _, c := range racks {
		if c.SystemID == k.SystemID {
			writeJSON(w, http.StatusOK, c)
			return nil
		}
	}
	return store.ErrNotFound
}

// servedSubnets reads served_subnets: CIDRs, or "reported" for the
// region's subnets that hold the addresses of the rack's last report.
func (s *Server) servedSubnets(ctx context.Context, k store.Rack, vs []string) ([]string, error) {
	var cidrs []string
	for _, v := range vs {
		if strings.TrimSpace(v) != "reported" {
			cidrs = append(cidrs, v)
			continue
		}
		subnets, err := s.store.ListSubnets(ctx)
		if err != nil {
			return nil, err
		}
		for _, a := range k.ReportedAddresses() {
			if sn, ok := rack.SubnetHolding(subnets, a); ok {
				cidrs = append(cidrs, sn.CIDR)
			}
		}
	}
	nets, err := powerroute.ParseNetworks(cidrs)
	if err != nil {
		return nil, badField("served_subnets", "%v", strings.Replace(err.Error(), "BMC network", "subnet", 1))
	}
	return append([]string{}, powerroute.Strings(nets)...), nil
}
