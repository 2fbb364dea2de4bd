package network

import "net/netip"

// InterfaceType is MAAS's interface type.
type InterfaceType string

const (
	Physical InterfaceType = "physical"
	Bond     InterfaceType = "bond"
	Bridge   InterfaceType = "bridge"
	VLANIf   InterfaceType = "vlan"
)

// Interface is a machine's network interface. Parents and links refer to
// other objects by ID, as the store keeps them.
type Interface struct {
	ID      int
	Name    string
	Type    InterfaceType
	MAC     string // a bond's or bridge's is its first parent's by default
	Parents []int  // interface IDs: a bond's members, a bridge's ports, a VLAN's link
	VLANID  int
	MTU     int // 0 inherits the VLAN's
	Enabled bool
	Tags    []string
	Bond    BondParams
	Bridge  BridgeParams
	Links   []Link
}

// LinkMode is how an interface gets an address on a subnet.
type LinkMode string

const (
	LinkAuto   LinkMode = "auto"    // an address from the subnet, chosen at deploy
	LinkStatic LinkMode = "static"  // the address given
	LinkDHCP   LinkMode = "dhcp"    // from a DHCP server
	LinkUp     LinkMode = "link_up" // up, with no address
)

// Link is an interface's link to a subnet. IP is the address of a STATIC
// link, or of an AUTO one once allocated (zero before).
type Link struct {
	ID       int
	Mode     LinkMode
	SubnetID int // 0 for none (LINK_UP, DHCP on an unknown subnet)
	IP       netip.Addr
}

// Machine is one machine's interfaces, the interface it boots from and the
// links the owner chose for the default gateway (0: let it be chosen).
type Machine struct {
	Interfaces    []Interface
	BootInterface int
	GatewayLink4  int
	GatewayLink6  int
}

// Interface returns the machine's interface with the given ID.
func (m *Machine) Interface(id int) (Interface, bool) {
	for _, i := range m.Interfaces {
		if i.ID == id {
			return i, true
		}
	}
	return Interface{}, false
}

// Children returns the interfaces that have id among their parents,
// other than the interface skip (the one being checked; -1 for none).
func (m *Machine) Children(id, skip int) []Interface {
	var out []Interface
	for _, c := range m.Interfaces {
		if c.ID == skip {
			continue
		}
		for _, p := range c.Parents {
			if p == id {
				out = append(out, c)
				break
			}
		}
	}
	return out
}
