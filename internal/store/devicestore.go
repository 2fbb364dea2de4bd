package store

import (
	"context"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
)

// Device is MAAS's non-deployable node: a host Anvil does not boot but
// keeps interfaces, addresses and DNS names for (a container, a switch).
// It is owned by its creator and may belong to a parent machine, whose
// release or deletion takes it away.
type Device struct {
	SystemID    string
	Hostname    string
	Domain      string // "" is the default domain
	Description string
	Owner       string
	Parent      string // the parent machine's system_id, "" for none
	// ParentOwner is the parent machine's owner: who else may see and
	// change the device.
	ParentOwner string
	Zone        string
	OwnerData   map[string]string
	Tags        []string
	// Interfaces are the device's physical interfaces, by id.
	Interfaces []machine.Interface
	Created    time.Time
	Updated    time.Time
}

// DeviceFilter selects devices; an empty field means any. The lists are
// MAAS's devices/ filters.
type DeviceFilter struct {
	SystemIDs []string
	Hostnames []string
	MACs      []string // normalised
	Domains   []string
	Zones     []string
	Owners    []string
	Parents   []string // parent system_ids
	// VisibleTo limits the result to devices the user owns or whose
	// parent machine it owns; empty means every device (admin).
	VisibleTo string
}

// DeviceStore keeps devices in the nodes' table, so that the interface,
// address and DNS code serve them as they serve machines.
type DeviceStore interface {
	// CreateDevice stores d with one physical interface per MAC (eth0,
	// eth1, ...) in one transaction, assigning SystemID, Created and
	// Updated. A hostname, system_id or MAC any node holds is a
	// *ConflictError; an unknown zone or parent wraps ErrNotFound.
	CreateDevice(ctx context.Context, d *Device, macs []string) error
	GetDevice(ctx context.Context, systemID string) (Device, error)
	// ListDevices lists devices by row id (MAAS's order).
	ListDevices(ctx context.Context, f DeviceFilter) ([]Device, error)
	// UpdateDevice writes hostname, domain, description, parent, zone and
	// owner data.
	UpdateDevice(ctx context.Context, d Device) error
	// DeleteDevice deletes it with its interfaces and addresses.
	DeleteDevice(ctx context.Context, systemID string) error
	// DeleteChildDevices deletes the devices of a parent machine, as
	// MAAS does when the machine is released, and returns how many went.
	DeleteChildDevices(ctx context.Context, parent string) (int, error)
}
