package storage

import (
	"fmt"
	"slices"
)

// GRUB reads /boot from these filesystems.
var grubReads = []FSType{Ext2, Ext4, XFS, Btrfs, FAT32, VFAT}

// checkBoot refuses a configuration the firmware or GRUB cannot start.
func checkBoot(c Config, devs map[string]Device, fw Firmware, r *Refused) {
	root, ok := c.FilesystemAt("/")
	if !ok {
		r.add("no filesystem is mounted at /")
		return
	}
	if !slices.Contains([]FSType{Ext2, Ext4, XFS, Btrfs}, root.Type) {
		r.add("/ is %s; the root filesystem must be ext4, ext2, xfs or btrfs", root.Type)
		return
	}
	boot, ok := c.FilesystemAt("/boot")
	what := "/boot"
	if !ok {
		boot, what = root, "/ (there is no separate /boot)"
	}
	if !slices.Contains(grubReads, boot.Type) {
		r.add("%s is %s, which GRUB cannot read", what, boot.Type)
	}
	if why := grubCannotRead(boot.Device, devs); why != "" {
		r.add("%s is on %s", what, why)
	}
	bd, ok := c.Disk(c.BootDisk)
	if !ok {
		r.add("boot disk %q is not one of the machine's disks", c.BootDisk)
		return
	}
	t, hasTable := c.Table(bd.Name)
	switch fw {
	case UEFI:
		checkESP(c, devs, r)
	case BIOS:
		if !hasTable {
			r.add("boot disk %s has no partition table, so GRUB has nowhere to install itself", bd.Name)
		} else if t.Type == GPT && !slices.ContainsFunc(t.Partitions, func(p Partition) bool { return p.Type == PartBIOSGrub }) {
			r.add("boot disk %s is GPT on a BIOS machine and has no bios_grub partition for GRUB's core image", bd.Name)
		}
	default:
		r.add("firmware %q is not bios or uefi", fw)
	}
}

// grubCannotRead walks the stack under dev and says what GRUB cannot read
// there, or "". GRUB reads partitions, linear LVM and md RAID; Anvil puts
// /boot only on RAID 1, where each member holds a whole copy, so the
// machine still starts with a disk gone. bcache GRUB does not read at all.
func grubCannotRead(dev string, devs map[string]Device) string {
	d := devs[dev]
	switch d.Kind {
	case KindBcache:
		return fmt.Sprintf("bcache %s, which GRUB cannot read; put /boot on a partition", d.Name)
	case KindRAID:
		if d.Level != RAID1 {
			return fmt.Sprintf("RAID %s (%s); Anvil boots only from RAID 1 (raid-1), where every member holds a whole copy and GRUB can start from any one disk", d.Name, d.Level)
		}
	}
	for _, p := range d.Parents {
		if why := grubCannotRead(p, devs); why != "" {
			return why
		}
	}
	return ""
}

// checkESP: UEFI firmware reads the EFI system partition itself, and
// firmware reads only FAT on a plain partition: no RAID, LVM or bcache.
func checkESP(c Config, devs map[string]Device, r *Refused) {
	esp, ok := c.FilesystemAt("/boot/efi")
	if !ok {
		r.add("the machine boots UEFI and there is no EFI system partition (a fat32 filesystem at /boot/efi)")
		return
	}
	if esp.Type != FAT32 && esp.Type != VFAT {
		r.add("the EFI system partition at /boot/efi is %s; UEFI firmware reads only FAT (fat32 or vfat)", esp.Type)
	}
	if d := devs[esp.Device]; d.Kind != KindPartition {
		r.add("the EFI system partition is on %s %s; UEFI firmware reads only a plain disk partition, not RAID, LVM or bcache", d.Kind, d.Name)
	}
}

// NeedsInitramfs says whether the installed system must regenerate its
// initramfs for c: md arrays, LVM and bcache have to be assembled before
// the root is found, and the image's own initramfs was built without
// knowing them (no mdadm.conf, no volume group). A root on a plain
// partition boots with the image's initramfs as it is, which saves the
// longest step of an install (minutes on a slow machine).
func NeedsInitramfs(c Config) bool {
	return len(c.RAIDs) > 0 || len(c.VolumeGroups) > 0 || len(c.Bcaches) > 0
}
