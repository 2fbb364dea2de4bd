package machine

import "fmt"

// Limits on what an environment may report. The inventory arrives from
// machines nobody has vouched for yet (enlistment is anonymous), so every
// field is bounded: a real server's names, models and serials are a few
// dozen bytes, and its inventory a few kilobytes.
const (
	MaxInventoryDisks = 1024
	MaxInventoryNICs  = 64
	maxName           = 64  // kernel names, drivers, firmware and BMC types
	maxText           = 256 // models, vendors, products, serials, UUIDs, addresses
)

// CheckInventory refuses an inventory with more disks or NICs than a
// machine has, or a field longer than it can be, naming the field.
func CheckInventory(inv Inventory) error {
	if len(inv.Disks) > MaxInventoryDisks {
		return fmt.Errorf("disks: %d reported; at most %d", len(inv.Disks), MaxInventoryDisks)
	}
	if len(inv.NICs) > MaxInventoryNICs {
		return fmt.Errorf("nics: %d reported; at most %d", len(inv.NICs), MaxInventoryNICs)
	}
	type field struct {
		name, value string
		max         int
	}
	fields := []field{
		{"cpu.model", inv.CPU.Model, maxText}, {"firmware", inv.Firmware, maxName},
		{"smbios.vendor", inv.SMBIOS.Vendor, maxText}, {"smbios.product", inv.SMBIOS.Product, maxText},
		{"smbios.serial", inv.SMBIOS.Serial, maxText}, {"smbios.uuid", inv.SMBIOS.UUID, maxText},
	}
	for i, d := range inv.Disks {
		p := fmt.Sprintf("disks[%d].", i)
		fields = append(fields, field{p + "name", d.Name, maxName}, field{p + "model", d.Model, maxText}, field{p + "serial", d.Serial, maxText})
	}
	for i, n := range inv.NICs {
		p := fmt.Sprintf("nics[%d].", i)
		fields = append(fields, field{p + "name", n.Name, maxName}, field{p + "mac", n.MAC, maxName}, field{p + "driver", n.Driver, maxName})
	}
	if b := inv.BMC; b != nil {
		fields = append(fields, field{"bmc.type", b.Type, maxName}, field{"bmc.address", b.Address, maxText}, field{"bmc.mac", b.MAC, maxName})
	}
	for _, f := range fields {
		if len(f.value) > f.max {
			return fmt.Errorf("%s is %d bytes; at most %d", f.name, len(f.value), f.max)
		}
	}
	return nil
}

// Limits on the raw files a signal carries beside the inventory (what the
// environment read them from, results of its steps).
const (
	MaxResultFiles     = 64
	MaxResultFileName  = 128
	MaxResultFileBytes = 4 << 20
	MaxResultBytes     = 16 << 20
)

// CheckResultFiles bounds a signal's files one by one and in total.
func CheckResultFiles(files map[string][]byte) error {
	if len(files) > MaxResultFiles {
		return fmt.Errorf("%d files; at most %d", len(files), MaxResultFiles)
	}
	total := 0
	for name, data := range files {
		if len(name) > MaxResultFileName {
			return fmt.Errorf("a file name is %d bytes; at most %d", len(name), MaxResultFileName)
		}
		if len(data) > MaxResultFileBytes {
			return fmt.Errorf("%.128s is %d bytes; at most %d", name, len(data), MaxResultFileBytes)
		}
		total += len(data)
	}
	if total > MaxResultBytes {
		return fmt.Errorf("the files are %d bytes in all; at most %d", total, MaxResultBytes)
	}
	return nil
}
