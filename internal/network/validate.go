package network

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
)

// ifaceName is what Linux takes as an interface name and YAML and netplan
// read plainly: up to 15 characters, no slash, no space.
var ifaceName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,14}$`)

// Validate checks a machine's interfaces against the network: every rule
// of this package, each fault against the interface's name and field
// ("bond0.parents"). used says which addresses others hold (nil: none).
func Validate(n *Network, m *Machine, used Used) FieldErrors {
	var e FieldErrors
	names := map[string]int{}
	macs := map[string]string{}
	addrs := map[netip.Addr]string{}
	ids := map[int]bool{}
	for _, i := range m.Interfaces {
		prefix := i.Name
		if prefix == "" {
			prefix = fmt.Sprintf("interface %d", i.ID)
		}
		if prev, dup := names[i.Name]; dup && i.Name != "" {
			e.Add(prefix+".name", "Machine already has an interface named '%s' (interface %d).", i.Name, prev)
		}
		names[i.Name] = i.ID
		if ids[i.ID] {
			e.Add(prefix+".id", "Interface ID %d is used twice.", i.ID)
		}
		ids[i.ID] = true
		ie := validateInterface(n, m, i, used)
		if i.Type == Physical {
			if mac, err := net.ParseMAC(i.MAC); err == nil {
				if other, dup := macs[mac.String()]; dup {
					ie.Add("mac_address", "MAC address %s is already the MAC of %s.", mac, other)
				}
				macs[mac.String()] = i.Name
			}
		}
		for _, l := range i.Links {
			if !l.IP.IsValid() {
				continue
			}
			if other, dup := addrs[l.IP]; dup {
				ie.Add("ip_address", "IP address %s is already on %s.", l.IP, other)
			}
			addrs[l.IP] = i.Name
		}
		e.Merge(prefix, ie)
	}
	if cyc := parentCycle(m); cyc != "" {
		e.Add(cyc+".parents", "%s is its own ancestor.", cyc)
	}
	e.Merge("", validateGateways(n, m))
	e.Merge("", validateDefaultRoutes(n, m))
	return e
}

// validateInterface applies the rules of the interface's type, then MTU
// and links.
func validateInterface(n *Network, m *Machine, i Interface, used Used) FieldErrors {
	var e FieldErrors
	if !ifaceName.MatchString(i.Name) {
		e.Add("name", "Interface name %q is not valid: 1 to 15 characters, letters, digits and _ . : - (a letter, digit or _ first).", i.Name)
	}
	if i.MAC != "" || i.Type == Physical {
		if mac, err := net.ParseMAC(i.MAC); err != nil || len(mac) != 6 {
			e.Add("mac_address", "'%s' is not a valid MAC address.", i.MAC)
		}
	}
	if _, ok := n.VLAN(i.VLANID); !ok && i.Type != VLANIf {
		e.Add("vlan", "VLAN %d does not exist.", i.VLANID)
	}
	switch i.Type {
	case Physical:
		if len(i.Parents) > 0 {
			e.Add("parents", "A physical interface cannot have parents.")
		}
	case Bond:
		e.Merge("", validateBond(m, i))
	case Bridge:
		e.Merge("", validateBridge(m, i))
	case VLANIf:
		e.Merge("", validateVLANInterface(n, m, i))
	default:
		e.Add("type", "Invalid interface type '%s'.", i.Type)
	}
	for _, id := range i.Parents {
		if id == i.ID {
			e.Add("parents", "An interface cannot be its own parent.")
		} else if p, ok := m.Interface(id); ok && i.Enabled && !p.Enabled {
			e.Add("enabled", "%s is enabled but its parent %s is not.", i.Name, p.Name)
		}
	}
	for _, c := range m.Children(i.ID, -1) {
		if c.Type != Bond && c.Type != Bridge {
			continue
		}
		for _, l := range i.Links {
			if l.Mode != LinkUp {
				e.Add("links", "%s is in %s %s: its addresses belong on %s.", i.Name, c.Type, c.Name, c.Name)
			}
		}
	}
	e.Merge("", validateMTU(n, m, i))
	e.Merge("", validateLinks(n, i, used))
	return e
}

// parentCycle names an interface that is its own ancestor, "" if none.
func parentCycle(m *Machine) string {
	const (
		visiting = 1
		done     = 2
	)
	state := map[int]int{}
	var visit func(id int) bool
	visit = func(id int) bool {
		switch state[id] {
		case visiting:
			return true
		case done:
			return false
		}
		state[id] = visiting
		i, _ := m.Interface(id)
		for _, p := range i.Parents {
			if p != id && visit(p) {
				return true
			}
		}
		state[id] = done
		return false
	}
	for _, i := range m.Interfaces {
		if visit(i.ID) {
			return i.Name
		}
	}
	return ""
}

// validateDefaultRoutes refuses a static route to a default destination
// on a machine that already has a default gateway of that family: two
// default routes, one of them silently lost.
func validateDefaultRoutes(n *Network, m *Machine) FieldErrors {
	var e FieldErrors
	gw := DefaultGateways(n, m)
	for _, r := range routesOf(n, m) {
		if r.Destination.Bits() != 0 {
			continue
		}
		if (r.Destination.Addr().Is4() && gw.IPv4.Router.IsValid()) || (r.Destination.Addr().Is6() && gw.IPv6.Router.IsValid()) {
			e.Add("routes", "Static route %d to %s is a second default gateway.", r.ID, r.Destination)
		}
	}
	return e
}

// routesOf are the static routes from subnets the machine has an address
// on, in ID order.
func routesOf(n *Network, m *Machine) []StaticRoute {
	linked := map[int]bool{}
	for _, i := range m.Interfaces {
		for _, l := range i.Links {
			if i.Enabled && (l.Mode == LinkAuto || l.Mode == LinkStatic) {
				linked[l.SubnetID] = true
			}
		}
	}
	var out []StaticRoute
	for _, r := range n.Routes {
		if linked[r.SourceID] {
			out = append(out, r)
		}
	}
	return out
}
