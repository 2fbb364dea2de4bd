// Package device decides what MAAS's devices allow: who may see and
// change one, and when a parent machine's devices go. Devices are nodes
// Anvil never boots (containers, appliances); they have interfaces,
// addresses and DNS names but no lifecycle.
package device

import "github.com/anvilmetal/anvil/internal/machine"

// NodeType is MAAS's node_type number for a device, and NodeTypeName its
// name.
const (
	NodeType     = 1
	NodeTypeName = "Device"
)

// CanView reports whether a may see a device owned by owner whose parent
// machine is owned by parentOwner ("" for none): administrators see
// every device, others their own and those of the machines they own.
func CanView(a machine.Actor, owner, parentOwner string) bool {
	return a.System || a.Admin || (a.Name != "" && (owner == a.Name || parentOwner == a.Name))
}

// CanEdit is CanView: whoever may see a device may change or delete it,
// as MAAS's edit permission on a node its user owns.
func CanEdit(a machine.Actor, owner, parentOwner string) bool { return CanView(a, owner, parentOwner) }

// GoWithRelease reports whether a machine moving from one status to
// another is being released, which deletes its devices (MAAS removes a
// machine's non-installable children when its release starts).
func GoWithRelease(from, to machine.Status) bool {
	if from == to {
		return false
	}
	switch to {
	case machine.Releasing:
		return true
	case machine.DiskErasing:
		// An erase is a release that wipes disks first.
		return from != machine.FailedDiskErasing
	}
	return false
}
