package store

import "context"

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
}

// DHCPHost pins a MAC to an address on a subnet.
type DHCPHost struct {
	SubnetID int64
	MAC      string
	IP       string
	Hostname string
}
