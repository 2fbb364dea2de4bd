package store

import (
	"context"

	"github.com/anvilmetal/anvil/internal/network"
)

// InterfaceStore keeps what a machine's interfaces need beyond the
// network model's rows: the links its owner chose for the default
// gateways.
type InterfaceStore interface {
	// DefaultGatewayLinks are the links (ip_addresses ids) chosen for the
	// machine's IPv4 and IPv6 default gateway, 0 for none chosen.
	DefaultGatewayLinks(ctx context.Context, systemID string) (v4, v6 int64, err error)
	// SetDefaultGatewayLinks records them; 0 clears a family's choice.
	SetDefaultGatewayLinks(ctx context.Context, systemID string, v4, v6 int64) error
	// DHCPHosts are the fixed leases the model implies: every address of
	// a node's interface that has a MAC (AUTO once allocated, STATIC) and
	// every reservation made for a MAC, by id.
	DHCPHosts(ctx context.Context) ([]DHCPHost, error)
	// MachineNetworks is the site's network and the interfaces of each
	// machine named (with its chosen gateway links), read at once; an
	// unknown system ID is left out.
	MachineNetworks(ctx context.Context, systemIDs []string) (*network.Network, map[string]*network.Machine, error)
	// WriteInterfaces makes a change to one machine's interfaces that
	// takes several steps in one transaction: all of it, or nothing.
	WriteInterfaces(ctx context.Context, w *InterfaceWrite) error
}

// InterfaceWrite is a change to one machine's interfaces, applied in this
// order: Create, Updates, DropLinks, Deletes, AddLink, Gateways.
type InterfaceWrite struct {
	SystemID string
	// Create is a new interface; its ID is set once it is stored.
	Create *Interface
	// Updates are interfaces stored over those of their IDs.
	Updates []Interface
	// DropLinks are links (ip_addresses rows) that go.
	DropLinks []int64
	// Deletes are interfaces that go, in the order given.
	Deletes []int64
	// AddLink is a new link; an InterfaceID of 0 means Create's. Its ID
	// is set once it is stored.
	AddLink *IPAddress
	// Gateways, when not nil, are the machine's chosen IPv4 and IPv6
	// gateway links afterwards (0: none); NewLink stands for AddLink's.
	Gateways *[2]int64
}

// NewLink in InterfaceWrite.Gateways is the link the write adds.
const NewLink = -1

// DHCPHost pins a MAC to an address on a subnet.
type DHCPHost struct {
	SubnetID int64
	MAC      string
	IP       string
	Hostname string
}
