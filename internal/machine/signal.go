package machine

import (
	"fmt"
	"slices"
	"strings"
)

// SignalAction maps MAAS's op=signal statuses to the action they mean: OK
// ends the phase well, FAILED badly, and the progress statuses are
// heartbeats that keep the status timeout from expiring.
func SignalAction(status string) (Action, error) {
	switch strings.ToUpper(status) {
	case "OK":
		return Succeed, nil
	case "FAILED":
		return Fail, nil
	case "INSTALLED":
		return Installed, nil
	case "WORKING", "COMMISSIONING", "TESTING", "DEPLOYING", "RELEASING", "DISK_ERASING", "RESCUE_MODE", "APPLYING_NETCONF":
		return Heartbeat, nil
	}
	return "", fmt.Errorf("unknown signal status %q", status)
}

// ApplyInventory records what commissioning found and derives MAAS's
// summary fields from it. NICs the machine lacks are added; known ones
// take the name the environment saw; the boot interface is kept.
func ApplyInventory(m *Machine, inv Inventory) {
	inv = inv.Clone()
	m.Inventory = &inv
	if inv.CPU.Threads > 0 {
		m.CPUCount = inv.CPU.Threads
	}
	if inv.MemoryMiB > 0 {
		m.Memory = inv.MemoryMiB
	}
	var bytes int64
	for _, d := range inv.Disks {
		bytes += d.Size
	}
	m.Storage = float64(bytes) / 1e6
	if m.HardwareUUID == "" && UsableUUID(inv.SMBIOS.UUID) {
		m.HardwareUUID = strings.ToLower(inv.SMBIOS.UUID)
	}
	for _, n := range inv.NICs {
		if n.MAC == "" {
			continue
		}
		i := slices.IndexFunc(m.Interfaces, func(i Interface) bool { return i.MAC == n.MAC })
		if i < 0 {
			m.Interfaces = append(m.Interfaces, Interface{Name: n.Name, MAC: n.MAC})
			continue
		}
		if n.Name != "" {
			m.Interfaces[i].Name = n.Name
		}
	}
}
