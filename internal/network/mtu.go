package network

// EffectiveMTU is the MTU the interface runs with: its own, else its
// VLAN's, else DefaultMTU.
func EffectiveMTU(n *Network, i Interface) int {
	if i.MTU != 0 {
		return i.MTU
	}
	if v, ok := n.VLAN(i.VLANID); ok {
		return v.EffectiveMTU()
	}
	return DefaultMTU
}

// validateMTU checks the interface's MTU is in bounds and no greater than
// any parent's: a frame a child sends must fit the link below it.
func validateMTU(n *Network, m *Machine, i Interface) FieldErrors {
	var e FieldErrors
	if i.MTU != 0 && (i.MTU < MinMTU || i.MTU > MaxMTU) {
		e.Add("mtu", "MTU must be between %d and %d.", MinMTU, MaxMTU)
		return e
	}
	mine := EffectiveMTU(n, i)
	for _, id := range i.Parents {
		p, ok := m.Interface(id)
		if !ok {
			continue
		}
		if pm := EffectiveMTU(n, p); mine > pm {
			e.Add("mtu", "MTU %d is greater than the MTU %d of parent %s.", mine, pm, p.Name)
		}
	}
	return e
}
