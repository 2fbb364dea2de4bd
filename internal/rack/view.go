package rack

import (
	"encoding/json"
	"net/netip"
	"time"

	"github.com/anvilmetal/anvil/internal/store"
)

// How the region shows a rack from what it recorded of it (the API's
// rackcontrollers/ and the controllers page read the same).

// StaleReport is when a report no longer says how the rack is.
const StaleReport = 3 * StatusEvery

// View is a recorded rack as the region judges it now.
type View struct {
	store.Rack
	Alive bool
	// Status is its last report (zero without one); Stale says it is
	// older than StaleReport.
	Status    Status
	HasReport bool
	Stale     bool
}

// ViewOf reads the rack's last report and judges it at now.
func ViewOf(k store.Rack, now time.Time) View {
	v := View{Rack: k, Alive: now.Sub(k.Seen) <= store.RackAlive}
	if k.Report != "" && json.Unmarshal([]byte(k.Report), &v.Status) == nil {
		v.HasReport, v.Stale = true, now.Sub(k.Reported) > StaleReport
	}
	return v
}

// Services are rackd (alive or dead by when it was last seen), then
// the services it reported, unknown when the report is stale.
func (v View) Services() []ServiceStatus {
	out := []ServiceStatus{{Name: "rackd", Status: StatusRunning}}
	if !v.Alive {
		out[0] = ServiceStatus{Name: "rackd", Status: StatusDead, Info: "not seen since " + v.Seen.UTC().Format(time.RFC3339)}
	}
	for _, s := range v.Status.Services {
		if v.Stale {
			s.Status, s.Info = StatusUnknown, "no report since "+v.Reported.UTC().Format(time.RFC3339)
		}
		out = append(out, s)
	}
	return out
}

// Addresses are the addresses of the rack's reported interfaces.
func (v View) Addresses() []netip.Addr {
	var out []netip.Addr
	for _, i := range v.Status.Interfaces {
		for _, a := range i.Addresses {
			if p, err := netip.ParsePrefix(a); err == nil {
				out = append(out, p.Addr())
			}
		}
	}
	return out
}

// VLAN roles of a rack.
const (
	RolePrimary   = "primary"
	RoleSecondary = "secondary"
	RoleConnected = "connected"
)

// VLANRoles are the VLANs the rack serves, by id: as primary or
// secondary rack, or connected (an address on one of the VLAN's
// subnets).
func (v View) VLANRoles(vlans []store.VLAN, subnets []store.Subnet) map[int64]string {
	role := map[int64]string{}
	for _, vl := range vlans {
		switch v.SystemID {
		case vl.PrimaryRack:
			role[vl.ID] = RolePrimary
		case vl.SecondaryRack:
			role[vl.ID] = RoleSecondary
		}
	}
	for _, a := range v.Addresses() {
		if sn, ok := SubnetHolding(subnets, a); ok && role[sn.VLANID] == "" {
			role[sn.VLANID] = RoleConnected
		}
	}
	return role
}

// SubnetHolding is the subnet that contains a.
func SubnetHolding(subnets []store.Subnet, a netip.Addr) (store.Subnet, bool) {
	for _, sn := range subnets {
		if p, err := netip.ParsePrefix(sn.CIDR); err == nil && p.Contains(a) {
			return sn, true
		}
	}
	return store.Subnet{}, false
}
