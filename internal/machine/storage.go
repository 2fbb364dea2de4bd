package machine

import (
	"fmt"
	"strings"

	"github.com/anvilmetal/anvil/internal/storage"
)

// StorageDisks are the inventory's disks as the storage model has them:
// MAAS's tags (ssd or rotary, removable), 512-byte blocks when the
// environment did not say.
func StorageDisks(inv Inventory) []storage.Disk {
	out := make([]storage.Disk, 0, len(inv.Disks))
	for _, d := range inv.Disks {
		tags := []string{"ssd"}
		if d.Rotational {
			tags = []string{"rotary"}
		}
		if d.Removable {
			tags = append(tags, "removable")
		}
		bs := d.BlockSize
		if bs == 0 {
			bs = 512
		}
		out = append(out, storage.Disk{Name: d.Name, Model: d.Model, Serial: d.Serial, IDPath: d.IDPath, Size: d.Size, BlockSize: bs, Tags: tags})
	}
	return out
}

// Firmware is how the inventory says the machine booted; anything but
// UEFI is laid out for BIOS, as MAAS does.
func (inv Inventory) StorageFirmware() storage.Firmware {
	if inv.Firmware == string(storage.UEFI) {
		return storage.UEFI
	}
	return storage.BIOS
}

// StorageAfterCommissioning decides a machine's storage configuration
// once commissioning has reported inv: the one it has when its disks are
// the same hardware as before, else the layout named (MAAS's
// default_storage_layout) computed afresh. A layout that does not fit
// leaves no configuration. The text, when not empty, is the event saying
// what happened.
func StorageAfterCommissioning(old *storage.Config, inv Inventory, layout string) (*storage.Config, string) {
	disks := StorageDisks(inv)
	if old != nil && storage.SameDisks(old.Disks, disks) {
		return old, ""
	}
	c, text := LayStorage(old, inv, layout)
	if old != nil {
		text = upper(strings.TrimSuffix("the disks changed, so the storage configuration was reset; "+text, "; "))
	}
	return c, text
}

// LayStorage computes the layout named for the inventory's disks afresh
// (restore_storage_configuration, and commissioning when the disks
// changed). Disks keep their ids by name and new ones get the next (1,
// 2, ... at first), which also orders MAAS's boot disk choice; the old
// configuration's other ids are not given again. No disks, or a layout
// that does not fit, leave no configuration; the text says what was done.
func LayStorage(old *storage.Config, inv Inventory, layout string) (*storage.Config, string) {
	disks := StorageDisks(inv)
	var prev storage.Config
	if old != nil {
		prev = *old
	}
	if len(disks) == 0 {
		return nil, ""
	}
	base := prev.Relayout(storage.Config{Disks: disks})
	c, err := storage.ApplyLayout(layout, storage.Machine{Disks: base.Disks, Firmware: inv.StorageFirmware()}, storage.LayoutParams{AllowFallback: true})
	if err != nil {
		return nil, fmt.Sprintf("the %s storage layout was not applied: %v", layout, err)
	}
	c = base.Relayout(c)
	return &c, fmt.Sprintf("the %s storage layout was applied", c.Layout)
}

func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
