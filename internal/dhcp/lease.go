package dhcp

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"time"
)

// LeaseState says how far a client got with an address.
type LeaseState string

const (
	// StateOffered: an OFFER went out; the address is held for OfferHold.
	StateOffered LeaseState = "offered"
	// StateBound: the client has an ACK and owns the address until Expires.
	StateBound LeaseState = "bound"
	// StateReleased: the client gave the address back. The record is kept
	// (already expired) so the same client gets the same address next time.
	StateReleased LeaseState = "released"
)

// Lease binds one MAC to one address. A store keeps at most one lease per
// MAC and at most one per address.
type Lease struct {
	MAC      net.HardwareAddr
	IP       netip.Addr
	Subnet   netip.Prefix
	Hostname string
	State    LeaseState
	Expires  time.Time
	// Updated is when the lease was written; stores use it as "now" when
	// deciding whether another client's lease on the same address has
	// expired, so the decision does not depend on the store's clock.
	Updated time.Time
}

// Active reports whether l still holds its address at time now.
func (l Lease) Active(now time.Time) bool {
	return l.State != StateReleased && l.Expires.After(now)
}

// ErrAddressInUse is returned by Put when another MAC holds an active
// lease on the address. Making the store the arbiter of uniqueness is what
// keeps two racing servers or goroutines from handing out one address
// twice: a database-backed store maps it onto a unique index.
var ErrAddressInUse = errors.New("dhcp: address leased to another client")

// LeaseStore keeps leases. Implementations must be safe for concurrent use.
//
// Put stores l as the lease of l.MAC, replacing any earlier lease of that
// MAC. It fails with ErrAddressInUse if a different MAC holds l.IP with a
// lease active at l.Updated; an inactive lease of another MAC on l.IP is
// removed, since that client lost its claim.
type LeaseStore interface {
	Get(ctx context.Context, mac net.HardwareAddr) (Lease, bool, error)
	FindByIP(ctx context.Context, ip netip.Addr) (Lease, bool, error)
	Put(ctx context.Context, l Lease) error
	Delete(ctx context.Context, mac net.HardwareAddr) error
	List(ctx context.Context) ([]Lease, error)
}
