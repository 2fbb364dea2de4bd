package storage

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Refused lists why a configuration cannot be deployed, one reason each.
type Refused struct{ Reasons []string }

func (r *Refused) Error() string {
	return "storage configuration cannot be deployed: " + strings.Join(r.Reasons, "; ")
}

func (r *Refused) add(format string, args ...any) {
	r.Reasons = append(r.Reasons, fmt.Sprintf(format, args...))
}

// Validate checks, before anything is written, that c can be laid out and
// that the machine booting with fw can then start from it. It returns
// *Refused naming every problem, or nil.
func Validate(c Config, fw Firmware) error {
	r := &Refused{}
	devs, err := c.Devices()
	if err != nil {
		r.add("%v", err)
		return r
	}
	checkTables(c, r)
	checkGroups(c, devs, r)
	checkUses(c, r)
	checkFilesystems(c, devs, r)
	checkBoot(c, devs, fw, r)
	if len(r.Reasons) == 0 {
		return nil
	}
	return r
}

func checkTables(c Config, r *Refused) {
	seen := map[string]bool{}
	for _, t := range c.Tables {
		d, _ := c.Disk(t.Disk)
		if seen[t.Disk] {
			r.add("%s has two partition tables", t.Disk)
		}
		seen[t.Disk] = true
		if t.Type != GPT && t.Type != MBR {
			r.add("%s: partition table type %q is not GPT or MBR", t.Disk, t.Type)
			continue
		}
		end := d.Size
		if t.Type == GPT {
			end -= EndOfTableSpace // GPT's backup header lives in the last MiB
		}
		parts := slices.Clone(t.Partitions)
		slices.SortFunc(parts, func(a, b Partition) int { return cmp.Compare(a.Offset, b.Offset) })
		for i, p := range parts {
			name := PartitionName(t.Disk, p.Number)
			if p.Size < MiB {
				r.add("partition %s is %d bytes; the smallest is 1 MiB", name, p.Size)
			}
			if p.Offset < MiB {
				r.add("partition %s starts at %d, inside the partition table (the first MiB)", name, p.Offset)
			}
			if p.Offset+p.Size > end {
				r.add("partition %s ends at %d, past the end of %s (%d bytes usable of %d)", name, p.Offset+p.Size, t.Disk, end, d.Size)
			}
			if t.Type == MBR && p.Offset+p.Size > (1<<32)*512 {
				r.add("partition %s ends past 2 TiB, which MBR cannot address; use GPT", name)
			}
			if i > 0 && parts[i-1].Offset+parts[i-1].Size > p.Offset {
				r.add("partitions %s and %s overlap", PartitionName(t.Disk, parts[i-1].Number), name)
			}
			if p.Type == PartBIOSGrub && t.Type != GPT {
				r.add("partition %s is bios_grub, which only GPT has", name)
			}
		}
		if t.Type == MBR {
			checkMBRNumbers(t, r)
		}
	}
}

// checkMBRNumbers: MBR has four slots; partitions 5 and up are logical
// ones inside an extended partition, which takes one of the four.
func checkMBRNumbers(t PartitionTable, r *Refused) {
	primary, logical := 0, 0
	for _, p := range t.Partitions {
		switch {
		case p.Number < 1:
			r.add("partition number %d on %s is not 1 or more", p.Number, t.Disk)
		case p.Number <= 4:
			primary++
		default:
			logical++
		}
	}
	if primary > 4 || (logical > 0 && primary > 3) {
		r.add("%s: MBR holds at most 4 primary partitions (or 3 and an extended one for partitions 5 and up); this table has %d primary and %d logical", t.Disk, primary, logical)
	}
}

// raidMinimum is MAAS's rule for each level: members, and whether spares
// are allowed.
var raidMinimum = map[RAIDLevel]int{RAID0: 2, RAID1: 2, RAID5: 3, RAID6: 4, RAID10: 3}

func checkGroups(c Config, devs map[string]Device, r *Refused) {
	for _, a := range c.RAIDs {
		n, ok := raidMinimum[a.Level]
		switch {
		case !ok:
			r.add("RAID %s: level %q is not one of raid-0, raid-1, raid-5, raid-6, raid-10", a.Name, a.Level)
		case len(a.Devices) < n:
			r.add("RAID %s: %s must have at least %d raid devices, it has %d", a.Name, a.Level, n, len(a.Devices))
		case a.Level == RAID0 && len(a.Spares) > 0:
			r.add("RAID %s: raid-0 cannot have spares", a.Name)
		}
		if !validName(a.Name) {
			r.add("RAID name %q is not 1 to 63 letters, digits and + _ . - (not starting with -, not . or ..)", a.Name)
		}
	}
	for _, vg := range c.VolumeGroups {
		if !validName(vg.Name) {
			r.add("volume group name %q is not 1 to 63 letters, digits and + _ . - (not starting with -, not . or ..)", vg.Name)
		}
		if len(vg.Devices) == 0 {
			r.add("volume group %s has no physical volumes", vg.Name)
		}
		var used int64
		for _, lv := range vg.Volumes {
			if !validName(lv.Name) {
				r.add("logical volume name %q is not 1 to 63 letters, digits and + _ . - (not starting with -, not . or ..)", lv.Name)
			}
			if lv.Size < LVMExtentSize || lv.Size%LVMExtentSize != 0 {
				r.add("logical volume %s is %d bytes; it must be a positive multiple of 4 MiB", LVName(vg.Name, lv.Name), lv.Size)
			}
			used += lv.Size
		}
		if free := VGSize(vg, devs); used > free {
			r.add("volume group %s holds %d bytes; its logical volumes need %d", vg.Name, free, used)
		}
	}
	for _, b := range c.Bcaches {
		if !slices.Contains([]CacheMode{WriteBack, WriteThrough, WriteAround}, b.Mode) {
			r.add("bcache %s: cache mode %q is not writeback, writethrough or writearound", b.Name, b.Mode)
		}
	}
}

// checkUses: a block device serves one purpose: a partition table, a
// RAID member or spare, an LVM PV, a bcache backing or cache, or a
// filesystem.
func checkUses(c Config, r *Refused) {
	uses := c.uses()
	names := make([]string, 0, len(uses))
	for n := range uses {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if u := uses[n]; len(u) > 1 {
			r.add("%s is used twice: as %s", n, strings.Join(u, " and as "))
		}
	}
}

func checkFilesystems(c Config, devs map[string]Device, r *Refused) {
	mounts := map[string]int{}
	for _, f := range c.Filesystems {
		where := f.Device
		if where == "" {
			where = string(f.Type)
		}
		switch {
		case !f.Type.Known():
			r.add("%s: filesystem type %q is not one of ext2, ext4, xfs, btrfs, fat32, vfat, swap, tmpfs, ramfs", where, f.Type)
		case f.Type.Special() && f.Device != "":
			r.add("%s is a memory filesystem and cannot be on device %s", f.Type, f.Device)
		case f.Type.Special() && f.MountPoint == "":
			r.add("%s needs a mount point", f.Type)
		case !f.Type.Special() && devs[f.Device].Name == "":
			r.add("%s filesystem: no such device %q", f.Type, f.Device)
		}
		mp := f.MountPoint
		if f.Type == Swap {
			if mp != "" && mp != "none" {
				r.add("swap on %s cannot be mounted at %s", where, mp)
			}
			continue
		}
		if mp == "" {
			continue
		}
		if !strings.HasPrefix(mp, "/") || strings.ContainsAny(mp, " \t\n\\#") || strings.Contains(mp, "/../") || strings.HasSuffix(mp, "/..") {
			r.add("mount point %q of %s must be an absolute path without spaces, backslashes, # or ..", mp, where)
		}
		if strings.ContainsAny(f.MountOptions, " \t\n#") {
			r.add("mount options %q of %s may not contain spaces or #", f.MountOptions, where)
		}
		mounts[mp]++
		if mounts[mp] == 2 {
			r.add("two filesystems are mounted at %s", mp)
		}
	}
}
