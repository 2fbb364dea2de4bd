package machine

import (
	"encoding/json"
	"fmt"
)

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

// Ranges of the numbers an environment may report. Each is well past the
// largest machine built (Linux itself stops at 8,192 CPUs), so a real
// server always fits; anything outside is a broken or hostile report.
// Renderers and plans size lists and sums by these numbers, so they must
// hold before a row is stored.
const (
	MaxCPUs        = 16384   // sockets, cores and threads
	MaxCPUMHz      = 100_000 // 100 GHz
	MaxMemoryMiB   = 1 << 30 // 1 EiB
	MaxDiskBytes   = 1 << 52 // 4 PiB a disk; 1,024 of them still sum within int64
	MinBlockSize   = 512
	MaxBlockSize   = 64 << 10
	MaxNICSpeedMbp = 10_000_000 // 10 Tb/s
	MaxPort        = 65535
)

// A Range is the plausible values of one reported number.
type Range struct{ Min, Max int64 }

// Check refuses a value outside the range, naming the field.
func (r Range) Check(field string, v int64) error {
	if v < r.Min || v > r.Max {
		return fmt.Errorf("%s: %d is out of range (%d to %d)", field, v, r.Min, r.Max)
	}
	return nil
}

// CheckInventory refuses an inventory with more disks or NICs than a
// machine has, a number outside what a machine can have, or a field
// longer than it can be or that is not text, naming the field.
func CheckInventory(inv Inventory) error {
	if err := checkInventoryNumbers(inv); err != nil {
		return err
	}
	return checkInventoryText(inv)
}

type number struct {
	name  string
	value int64
	r     Range
}

// checkInventoryNumbers bounds every number. A block size of 0 means
// "not reported"; any other must be a power of two a disk can have.
func checkInventoryNumbers(inv Inventory) error {
	if len(inv.Disks) > MaxInventoryDisks {
		return fmt.Errorf("disks: %d reported; at most %d", len(inv.Disks), MaxInventoryDisks)
	}
	if len(inv.NICs) > MaxInventoryNICs {
		return fmt.Errorf("nics: %d reported; at most %d", len(inv.NICs), MaxInventoryNICs)
	}
	cpus := Range{0, MaxCPUs}
	nums := []number{
		{"cpu.sockets", int64(inv.CPU.Sockets), cpus}, {"cpu.cores", int64(inv.CPU.Cores), cpus},
		{"cpu.threads", int64(inv.CPU.Threads), cpus}, {"cpu.mhz", int64(inv.CPU.MHz), Range{0, MaxCPUMHz}},
		{"memory_mib", inv.MemoryMiB, Range{0, MaxMemoryMiB}},
	}
	for i, d := range inv.Disks {
		p := fmt.Sprintf("disks[%d].", i)
		nums = append(nums, number{p + "size", d.Size, Range{0, MaxDiskBytes}}, number{p + "block_size", int64(d.BlockSize), Range{0, MaxBlockSize}})
		if bs := d.BlockSize; bs != 0 && (bs < MinBlockSize || bs&(bs-1) != 0) {
			return fmt.Errorf("%sblock_size: %d is not a power of two from %d to %d", p, bs, MinBlockSize, MaxBlockSize)
		}
	}
	for i, n := range inv.NICs {
		nums = append(nums, number{fmt.Sprintf("nics[%d].speed_mbps", i), int64(n.SpeedMbps), Range{0, MaxNICSpeedMbp}})
	}
	if b := inv.BMC; b != nil {
		nums = append(nums, number{"bmc.port", int64(b.Port), Range{0, MaxPort}})
	}
	for _, n := range nums {
		if err := n.r.Check(n.name, n.value); err != nil {
			return err
		}
	}
	return nil
}

// checkInventoryText bounds every string's length and refuses what is
// not text (invalid UTF-8, NUL): names become interface names and
// events, which a database's text columns refuse.
func checkInventoryText(inv Inventory) error {
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
		if err := CheckText(f.value); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
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

// DecodeInventory reads an inventory as the environment sends it (JSON,
// in an enlistment or as a signal's inventory file) and checks it: the
// text (machine.CheckJSONText), then every number and string
// (CheckInventory). Anything it returns without an error may be stored.
func DecodeInventory(data []byte) (Inventory, error) {
	var inv Inventory
	if path, err := CheckJSONText(data); err != nil {
		return Inventory{}, fmt.Errorf("%s %w", firstNonEmpty(path, "inventory"), err)
	}
	if err := json.Unmarshal(data, &inv); err != nil {
		return Inventory{}, err
	}
	return inv, CheckInventory(inv)
}
