package network

// MTU bounds MAAS enforces on VLANs and interfaces.
const (
	MinMTU = 552
	MaxMTU = 65535
)

// ValidateVLAN checks a VLAN object: its vid (0, the fabric's untagged
// VLAN, to 4094) unique on its fabric, its MTU, DHCP only with a dynamic
// range to hand out, and its relay.
func ValidateVLAN(n *Network, v VLAN) FieldErrors {
	var e FieldErrors
	if v.VID < 0 || v.VID > 4094 {
		e.Add("vid", "VID must be between 0 and 4094.")
	}
	if v.MTU != 0 && (v.MTU < MinMTU || v.MTU > MaxMTU) {
		e.Add("mtu", "MTU must be between %d and %d.", MinMTU, MaxMTU)
	}
	for _, o := range n.VLANs {
		if o.ID != v.ID && o.FabricID == v.FabricID && o.VID == v.VID {
			e.Add("vid", "A VLAN with the specified VID already exists in the destination fabric.")
		}
	}
	if v.DHCPOn && !hasDynamicRange(n, v.ID) {
		e.Add("dhcp_on", "dhcp can only be turned on when a dynamic IP range is defined.")
	}
	if v.RelayVLAN != 0 {
		if v.RelayVLAN == v.ID {
			e.Add("relay_vlan", "A VLAN cannot relay to itself.")
		} else if r, ok := n.VLAN(v.RelayVLAN); !ok {
			e.Add("relay_vlan", "VLAN %d does not exist.", v.RelayVLAN)
		} else if r.RelayVLAN != 0 {
			e.Add("relay_vlan", "VLAN %d is itself relayed; a relay goes to a VLAN with a DHCP server.", r.ID)
		}
	}
	return e
}

// hasDynamicRange reports whether a subnet of the VLAN has a dynamic
// range: what MAAS's DHCP on a VLAN hands out.
func hasDynamicRange(n *Network, vlanID int) bool {
	for _, s := range n.Subnets {
		if s.VLANID != vlanID {
			continue
		}
		for _, r := range n.RangesOf(s.ID) {
			if r.Type == RangeDynamic {
				return true
			}
		}
	}
	return false
}

// validateVLANInterface checks a VLAN interface: one parent, not a VLAN
// and not in a bond, and a tagged VLAN (vid 1..4094) on the parent's
// fabric that no other VLAN interface of the parent has.
func validateVLANInterface(n *Network, m *Machine, vi Interface) FieldErrors {
	var e FieldErrors
	if len(vi.Parents) != 1 {
		e.Add("parents", "A VLAN interface must have exactly one parent.")
		return e
	}
	p, ok := m.Interface(vi.Parents[0])
	if !ok {
		e.Add("parents", "Interface %d is not an interface of this machine.", vi.Parents[0])
		return e
	}
	if p.Type == VLANIf {
		e.Add("parents", "A VLAN interface can't have another VLAN interface as parent.")
	}
	for _, c := range m.Children(p.ID, vi.ID) {
		if c.Type == Bond {
			e.Add("parents", "A VLAN interface can't have a parent that is already in a bond.")
		}
	}
	v, ok := n.VLAN(vi.VLANID)
	if !ok {
		e.Add("vlan", "A VLAN interface must be connected to a tagged VLAN.")
		return e
	}
	if v.VID < 1 || v.VID > 4094 {
		e.Add("vlan", "A VLAN interface can only belong to a tagged VLAN.")
	}
	if pv, ok := n.VLAN(p.VLANID); ok && pv.FabricID != v.FabricID {
		e.Add("vlan", "A VLAN interface can only belong to a tagged VLAN on the same fabric as its parent interface.")
	}
	for _, c := range m.Children(p.ID, vi.ID) {
		if c.Type == VLANIf && c.VLANID == vi.VLANID {
			e.Add("vlan", "%s already has VLAN %d, as %s.", p.Name, v.VID, c.Name)
		}
	}
	return e
}
