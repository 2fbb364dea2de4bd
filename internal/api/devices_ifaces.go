package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"

	"github.com/anvilmetal/anvil/internal/device"
	"github.com/anvilmetal/anvil/internal/dnszone"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/network"
	"github.com/anvilmetal/anvil/internal/store"
)

// A device's interfaces are served by the machines' interface handlers:
// devices share the nodes' rows, so the model, the validation and the
// addresses are the same. What differs is here: who may change them, and
// that an AUTO link on a device gets its address at once (a device is
// never deployed, which is when a machine's are given).

// ifaceNode loads the node whose interfaces the path names: a machine
// the caller may see, or else a device it may see (dev set, m holding
// what the interface code reads of a node).
func (s *Server) ifaceNode(r *request) (m machine.Machine, dev *store.Device, err error) {
	m, err = s.visibleMachine(r)
	if !errors.Is(err, store.ErrNotFound) {
		return m, nil, err
	}
	d, derr := s.visibleDevice(r)
	if derr != nil {
		return m, nil, err
	}
	return machine.Machine{SystemID: d.SystemID, Hostname: d.Hostname, Domain: d.Domain, Owner: d.Owner}, &d, nil
}

// mayEdit refuses a change to the node's interfaces by a caller who may
// only read them: a machine's are for administrators, a device's for
// whoever may edit the device.
func (e *ifaceEdit) mayEdit(r *request) error {
	if e.dev != nil {
		if !device.CanEdit(r.who.actor(), e.dev.Owner, e.dev.ParentOwner) {
			return machine.ErrForbidden
		}
		return nil
	}
	if !r.who.user.Admin {
		return machine.ErrForbidden
	}
	return nil
}

// allocateDeviceLink gives a device's new AUTO link its address from the
// race-free allocator; when the subnet has none left the link goes again
// and the answer is MAAS's 503.
func (s *Server) allocateDeviceLink(r *request, a store.IPAddress) (store.IPAddress, error) {
	got, err := s.store.AllocateIP(r.Context(), store.IPAddress{ID: a.ID, SubnetID: a.SubnetID, InterfaceID: a.InterfaceID, AllocType: store.AllocAuto})
	if err == nil {
		return got, nil
	}
	if derr := s.store.DeleteIPAddress(r.Context(), a.ID); derr != nil && !errors.Is(derr, store.ErrNotFound) {
		return a, fmt.Errorf("drop link %d after a failed allocation: %w", a.ID, derr)
	}
	cidr := fmt.Sprint(a.SubnetID)
	if sn, serr := s.store.GetSubnet(r.Context(), a.SubnetID); serr == nil {
		cidr = sn.CIDR
	}
	s.log.Info("device address allocation failed", "subnet", cidr, "err", err)
	return a, &statusError{code: http.StatusServiceUnavailable, msg: "No more IPs available in subnet: " + cidr + "."}
}

// resetDeviceLinks is MAAS's set_initial_networking_configuration for a
// device: every link goes; the first interface gets AUTO on the first
// subnet of its VLAN (allocated at once), or DHCP when it has none; the
// other enabled interfaces are LINK_UP.
func (s *Server) resetDeviceLinks(r *request, systemID string) error {
	n, nm, err := s.store.MachineNetwork(r.Context(), systemID)
	if err != nil {
		return err
	}
	for _, i := range nm.Interfaces {
		for _, l := range i.Links {
			if err := s.store.DeleteIPAddress(r.Context(), int64(l.ID)); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
	}
	if err := s.store.SetDefaultGatewayLinks(r.Context(), systemID, 0, 0); err != nil {
		return err
	}
	for k, i := range nm.Interfaces {
		var l network.Link
		switch {
		case k == 0:
			l.Mode = network.LinkDHCP
			for _, sn := range n.Subnets {
				if sn.VLANID == i.VLANID && i.VLANID != 0 {
					l.Mode, l.SubnetID = network.LinkAuto, sn.ID
					break
				}
			}
		case i.Enabled:
			l.Mode = network.LinkUp
		default:
			continue
		}
		a, err := s.store.CreateIPAddress(r.Context(), storeLink(i.ID, l, r.who.user.Name))
		if err != nil {
			return err
		}
		if l.Mode == network.LinkAuto {
			if _, err := s.allocateDeviceLink(r, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// deviceHosts are the devices' DNS names: host.domain for the first
// interface's addresses (a device boots from none, so its first is the
// one MAAS names), the others under their interface's name, from ipam
// (addresses by node and interface name).
func (s *Server) deviceHosts(ctx context.Context, ipam map[string][]store.IPAddress) ([]dnszone.Host, error) {
	ds, err := s.store.ListDevices(ctx, store.DeviceFilter{})
	if err != nil {
		return nil, fmt.Errorf("devices for DNS: %w", err)
	}
	var out []dnszone.Host
	for _, d := range ds {
		named := map[string][]netip.Addr{} // by interface name
		for _, a := range ipam[d.SystemID] {
			named[a.Node.Interface] = append(named[a.Node.Interface], netip.MustParseAddr(a.IP))
		}
		h := dnszone.Host{Name: d.Hostname, Domain: cmp.Or(d.Domain, dnszone.DefaultDomain)}
		// By interface id: the first physical one is the boot one; bonds
		// and VLANs the model added come after, by name.
		seen := map[string]bool{}
		for k, i := range d.Interfaces {
			seen[i.Name] = true
			for _, a := range named[i.Name] {
				h.Addrs = append(h.Addrs, dnszone.HostAddr{Iface: i.Name, Boot: k == 0, IP: a})
			}
		}
		var rest []string
		for n := range named {
			if !seen[n] {
				rest = append(rest, n)
			}
		}
		slices.Sort(rest)
		for _, n := range rest {
			for _, a := range named[n] {
				h.Addrs = append(h.Addrs, dnszone.HostAddr{Iface: n, IP: a})
			}
		}
		if len(h.Addrs) > 0 {
			out = append(out, h)
		}
	}
	return out, nil
}

// deviceDefaults puts a device's new physical interface given no VLAN on
// the default fabric's untagged VLAN, where its first ones start: no
// commissioning will place it.
func (e *ifaceEdit) deviceDefaults(form url.Values, i *network.Interface) {
	if _, given := form["vlan"]; given || i.Type != network.Physical {
		return
	}
	for _, v := range e.n.VLANs {
		if v.FabricID == 0 && v.VID == 0 {
			i.VLANID = v.ID
		}
	}
}

// pickStatic says whether l is a device's STATIC link given no address,
// for which MAAS picks one from the subnet: it is checked as AUTO (l's
// mode changes) and stored as STATIC once the allocator has chosen.
func (e *ifaceEdit) pickStatic(l *network.Link) bool {
	if e.dev == nil || l.Mode != network.LinkStatic || l.IP.IsValid() {
		return false
	}
	l.Mode = network.LinkAuto
	return true
}

// stickyIf makes a the STATIC (sticky) row of a picked address.
func stickyIf(pick bool, a store.IPAddress) store.IPAddress {
	if pick {
		a.AllocType, a.IP = store.AllocSticky, ""
	}
	return a
}
