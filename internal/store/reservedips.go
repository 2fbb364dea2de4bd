package store

import (
	"context"
	"time"
)

// ReservedIP is MAAS's ReservedIP: an address a MAC keeps on a subnet.
// Only Comment may change; the rest is fixed once made, as in MAAS.
type ReservedIP struct {
	ID       int64
	SubnetID int64
	IP       string
	MAC      string // lower case, colon-separated
	Comment  string
	Created  time.Time
	Updated  time.Time
}

// ReservedIPStore keeps reserved IPs. Creating one and assigning an
// address (AllocateIP, CreateIPAddress) exclude each other per subnet, so
// a reservation never lands on an address another MAC was just given,
// nor an allocation on one just reserved.
type ReservedIPStore interface {
	ListReservedIPs(ctx context.Context) ([]ReservedIP, error)
	GetReservedIP(ctx context.Context, id int64) (ReservedIP, error)
	// CreateReservedIP fails with a *ConflictError when the address is
	// reserved already or held by a node of another MAC, or the MAC has a
	// reservation on the subnet.
	CreateReservedIP(ctx context.Context, r ReservedIP) (ReservedIP, error)
	UpdateReservedIPComment(ctx context.Context, id int64, comment string) (ReservedIP, error)
	DeleteReservedIP(ctx context.Context, id int64) error
}

// ReservedIPError refuses an address reserved for another MAC.
type ReservedIPError struct {
	IP, MAC string
}

func (e *ReservedIPError) Error() string {
	return "the IP address " + e.IP + " is reserved for the MAC address " + e.MAC
}

func (e *ReservedIPError) Unwrap() error { return ErrConflict }
