package network

import "slices"

// BridgeType is a bridge's implementation: the kernel's or Open vSwitch.
type BridgeType string

const (
	BridgeStandard BridgeType = "standard"
	BridgeOVS      BridgeType = "ovs"
)

// DefaultForwardDelay is MAAS's default bridge_fd, in seconds.
const DefaultForwardDelay = 15

// BridgeParams are a bridge's parameters under MAAS's names (bridge_type,
// bridge_stp, bridge_fd). ForwardDelay nil takes DefaultForwardDelay.
type BridgeParams struct {
	Type         BridgeType
	STP          bool
	ForwardDelay *int
}

// FD is the bridge's forward delay, MAAS's default when unset.
func (p BridgeParams) FD() int {
	if p.ForwardDelay == nil {
		return DefaultForwardDelay
	}
	return *p.ForwardDelay
}

// validateBridge checks a bridge's type and parents: at least one, none a
// bridge, none already in a bond or another bridge (a VLAN on a port is
// fine, as MAAS allows).
func validateBridge(m *Machine, br Interface) FieldErrors {
	var e FieldErrors
	if t := br.Bridge.Type; t != "" && t != BridgeStandard && t != BridgeOVS {
		e.Add("bridge_type", "%s", invalidChoice("bridge_type", string(t), []string{string(BridgeStandard), string(BridgeOVS)}))
	}
	if br.Bridge.FD() < 0 {
		e.Add("bridge_fd", "Ensure this value is greater than or equal to 0.")
	}
	if len(br.Parents) == 0 {
		e.Add("parents", "A bridge interface must have at least one parent.")
		return e
	}
	for _, id := range br.Parents {
		p, ok := m.Interface(id)
		if !ok {
			e.Add("parents", "Interface %d is not an interface of this machine.", id)
			continue
		}
		if p.Type == Bridge {
			e.Add("parents", "A bridge interface can't have another bridge interface as parent.")
		}
		if slices.ContainsFunc(m.Children(id, br.ID), func(c Interface) bool { return c.Type == Bond || c.Type == Bridge }) {
			e.Add("parents", "A bridge interface can't have a parent that is already in a bond or a bridge.")
		}
	}
	return e
}
