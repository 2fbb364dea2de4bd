package store

import (
	"context"
	"time"

	"github.com/anvilmetal/anvil/internal/network"
)

// Fabric is a set of VLANs that reach each other at layer 2. DefaultFabricID
// is fabric-0's, which exists from the first start.
type Fabric struct {
	ID          int64
	Name        string
	ClassType   string
	Description string
}

const DefaultFabricID int64 = 0

// Space is a named set of VLANs (and so subnets) that share a purpose.
type Space struct {
	ID          int64
	Name        string
	Description string
}

// VLAN is a VLAN on a fabric; VID 0 is the fabric's untagged VLAN.
// RelayVLANID and SpaceID are 0 for none.
type VLAN struct {
	ID            int64
	FabricID      int64
	VID           int
	Name          string
	MTU           int
	DHCPOn        bool
	RelayVLANID   int64
	SpaceID       int64
	PrimaryRack   string
	SecondaryRack string
	Description   string
}

// StaticRoute is MAAS's static route: from machines on Source to the
// Destination subnet via GatewayIP.
type StaticRoute struct {
	ID            int64
	SourceID      int64
	DestinationID int64
	GatewayIP     string
	Metric        int
}

// Interface is a node's network interface. Params holds MAAS's mtu,
// bond_* and bridge_* parameters; Links are its ip_addresses rows.
type Interface struct {
	ID       int64
	SystemID string
	Name     string
	Type     string // network.Physical, Bond, Bridge, VLANIf
	MAC      string
	Boot     bool
	VLANID   int64 // 0 for disconnected
	Enabled  bool
	Params   InterfaceParams
	Tags     []string
	Parents  []int64
	Links    []IPAddress
}

// InterfaceParams is what an interface keeps as JSON, under MAAS's names.
type InterfaceParams struct {
	MTU                int    `json:"mtu,omitempty"`
	BondMode           string `json:"bond_mode,omitempty"`
	BondMIIMon         int    `json:"bond_miimon,omitempty"`
	BondUpDelay        int    `json:"bond_updelay,omitempty"`
	BondDownDelay      int    `json:"bond_downdelay,omitempty"`
	BondLACPRate       string `json:"bond_lacp_rate,omitempty"`
	BondXmitHashPolicy string `json:"bond_xmit_hash_policy,omitempty"`
	BridgeType         string `json:"bridge_type,omitempty"`
	BridgeSTP          bool   `json:"bridge_stp,omitempty"`
	BridgeFD           *int   `json:"bridge_fd,omitempty"`
}

// MAAS's IP address allocation types (IPADDRESS_TYPE).
const (
	AllocAuto         = 0
	AllocSticky       = 1
	AllocUserReserved = 4
	AllocDHCP         = 5
	AllocDiscovered   = 6
)

// IPAddress is MAAS's StaticIPAddress: an address on a subnet, the link of
// an interface (InterfaceID) or a user's reservation (InterfaceID 0). IP is
// empty for an AUTO link not yet allocated and for DHCP and LINK_UP links;
// a STICKY link with no subnet is LINK_UP.
type IPAddress struct {
	ID          int64
	IP          string
	SubnetID    int64 // 0 for none
	AllocType   int
	InterfaceID int64
	Owner       string
	Hostname    string
	MAC         string
	Created     time.Time
	Updated     time.Time
	// Node is the node and interface of a link, as read (empty for a
	// reservation); writes ignore it.
	Node IPNode
}

// IPNode is what a listed address tells of the node it is linked to.
type IPNode struct {
	SystemID, Hostname, Owner, Interface string
}

// IPAddressFilter selects ip_addresses rows; zero fields select all.
type IPAddressFilter struct {
	SubnetID int64
	Owner    string
	SystemID string // the addresses of the node's interfaces
}

// NetworkStore persists the network model. Names are unique
// (*ConflictError), as are a VLAN's VID on its fabric and an assigned IP;
// deleting what is still referred to is ErrInUse, and nothing is changed.
type NetworkStore interface {
	ListFabrics(ctx context.Context) ([]Fabric, error)
	GetFabric(ctx context.Context, id int64) (Fabric, error)
	// CreateFabric stores f with its untagged VLAN in one transaction; an
	// empty name becomes MAAS's "fabric-<id>".
	CreateFabric(ctx context.Context, f Fabric) (Fabric, error)
	UpdateFabric(ctx context.Context, f Fabric) (Fabric, error)
	// DeleteFabric deletes the fabric and its VLANs; ErrInUse if one of
	// them has subnets or interfaces.
	DeleteFabric(ctx context.Context, id int64) error

	ListSpaces(ctx context.Context) ([]Space, error)
	GetSpace(ctx context.Context, id int64) (Space, error)
	CreateSpace(ctx context.Context, sp Space) (Space, error)
	UpdateSpace(ctx context.Context, sp Space) (Space, error)
	// DeleteSpace leaves its VLANs in no space.
	DeleteSpace(ctx context.Context, id int64) error

	ListVLANs(ctx context.Context) ([]VLAN, error)
	GetVLAN(ctx context.Context, id int64) (VLAN, error)
	// GetVLANByVID finds a fabric's VLAN by its VID.
	GetVLANByVID(ctx context.Context, fabricID int64, vid int) (VLAN, error)
	CreateVLAN(ctx context.Context, v VLAN) (VLAN, error)
	UpdateVLAN(ctx context.Context, v VLAN) (VLAN, error)
	// DeleteVLAN deletes a tagged VLAN (the untagged one is ErrNotFound):
	// its subnets and other interfaces move to the fabric's untagged
	// VLAN, VLAN interfaces on it are deleted.
	DeleteVLAN(ctx context.Context, id int64) error

	GetIPRange(ctx context.Context, id int64) (IPRange, error)
	UpdateIPRange(ctx context.Context, r IPRange) (IPRange, error)

	ListStaticRoutes(ctx context.Context) ([]StaticRoute, error)
	GetStaticRoute(ctx context.Context, id int64) (StaticRoute, error)
	CreateStaticRoute(ctx context.Context, r StaticRoute) (StaticRoute, error)
	UpdateStaticRoute(ctx context.Context, r StaticRoute) (StaticRoute, error)
	DeleteStaticRoute(ctx context.Context, id int64) error

	// Interfaces of a node, with parents and links, ordered by id.
	ListInterfaces(ctx context.Context, systemID string) ([]Interface, error)
	GetInterface(ctx context.Context, systemID string, id int64) (Interface, error)
	// CreateInterface stores i and its parents in one transaction.
	CreateInterface(ctx context.Context, i Interface) (Interface, error)
	// UpdateInterface writes i's fields and replaces its parents.
	UpdateInterface(ctx context.Context, i Interface) (Interface, error)
	// DeleteInterface deletes it with its links and parent rows.
	DeleteInterface(ctx context.Context, systemID string, id int64) error

	// ListIPAddresses lists ip_addresses rows, by id.
	ListIPAddresses(ctx context.Context, f IPAddressFilter) ([]IPAddress, error)
	// CreateIPAddress stores a link (a.InterfaceID set) or a reservation
	// with the address given, or none; an address already held is a
	// *ConflictError naming the holder.
	CreateIPAddress(ctx context.Context, a IPAddress) (IPAddress, error)
	// UpdateIPAddress rewrites a row's address, subnet, type, hostname
	// and MAC (a link's mode or subnet changing); an address held by
	// another row is a *ConflictError.
	UpdateIPAddress(ctx context.Context, a IPAddress) (IPAddress, error)
	// DeleteIPAddress deletes one row (a link or a reservation).
	DeleteIPAddress(ctx context.Context, id int64) error
	// AllocateIP gives a an address of its subnet chosen by
	// network.NextFree: the AUTO link a.ID when set (its ip filled in), or
	// a new row. It is race-free: the unique index on ip decides, and on a
	// clash it picks again.
	AllocateIP(ctx context.Context, a IPAddress) (IPAddress, error)
	// ReleaseAutoIPs clears the address of every AUTO link of the node's
	// interfaces, keeping the links, as MAAS does at release.
	ReleaseAutoIPs(ctx context.Context, systemID string) error

	// LoadNetwork reads the site's network objects in one snapshot.
	LoadNetwork(ctx context.Context) (*network.Network, error)
	// MachineNetwork reads the site's network and the node's interfaces
	// in one snapshot: what network.Validate and network.Render take.
	MachineNetwork(ctx context.Context, systemID string) (*network.Network, *network.Machine, error)
}
