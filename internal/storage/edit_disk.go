package storage

import (
	"path"
	"slices"
	"strings"
)

// DiskChange is an update of a physical disk as MAAS's block device
// update takes it: nil fields are left as they are.
type DiskChange struct {
	Name, Model, Serial, IDPath *string
	Size                        *int64
	BlockSize                   *int
}

// Deployed says whether the change is one MAAS allows on a deployed
// machine (name, model, serial and id_path: a failed disk replaced while
// the machine runs).
func (ch DiskChange) Deployed() bool { return ch.Size == nil && ch.BlockSize == nil }

// UpdateDisk applies ch to the disk name. A new name is carried to its
// partitions (sda-part1 becomes the new name's) and to everything built
// on the disk or its partitions; the disk must stay identifiable (MAAS:
// a serial and model, or an id_path), and a new size must still hold its
// partitions.
func UpdateDisk(c Config, name string, ch DiskChange) (Config, error) {
	i := slices.IndexFunc(c.Disks, func(d Disk) bool { return d.Name == name })
	if i < 0 {
		return c, badRequest("No disk %s.", name)
	}
	next := c.clone()
	d := &next.Disks[i]
	e := FieldErrors{}
	newName := name
	if ch.Name != nil && *ch.Name != name {
		switch n := *ch.Name; {
		case !validName(n):
			e.Add("name", "%q is not a valid name: use 1 to 63 letters, digits and + _ . - (not starting with -).", n)
		case c.nameTaken(n) || strings.Contains(n, "-part"):
			e.Add("name", "Block device with this Node config and Name already exists.")
		default:
			newName = n
		}
	}
	for _, f := range []struct {
		p   *string
		dst *string
	}{{ch.Model, &d.Model}, {ch.Serial, &d.Serial}} {
		if f.p != nil {
			*f.dst = strings.TrimSpace(*f.p)
		}
	}
	if ch.IDPath != nil {
		if p := *ch.IDPath; p != "" && (!strings.HasPrefix(p, "/") || path.Clean(p) != p) {
			e.Add("id_path", "Enter a valid absolute path.")
		}
		d.IDPath = *ch.IDPath
	}
	touched := ch.Model != nil || ch.Serial != nil || ch.IDPath != nil
	if touched && d.IDPath == "" && (d.Model == "" || d.Serial == "") {
		e.Add("__all__", "serial/model are required if id_path is not provided.")
	}
	if ch.BlockSize != nil {
		if *ch.BlockSize < 512 {
			e.Add("block_size", "Ensure this value is greater than or equal to 512.")
		}
		d.BlockSize = *ch.BlockSize
	}
	if ch.Size != nil {
		if *ch.Size < MinBlockDeviceSize {
			e.Add("size", "Ensure this value is greater than or equal to %d.", MinBlockDeviceSize)
		} else if t, ok := c.Table(name); ok {
			for _, p := range t.Partitions {
				if p.Offset+p.Size > *ch.Size {
					e.Add("size", "Partition %s ends at byte %d, past the new size.", PartitionName(name, p.Number), p.Offset+p.Size)
					break
				}
			}
		}
		d.Size = *ch.Size
	}
	if err := e.Err(); err != nil {
		return c, err
	}
	if newName != name {
		next.renameDevice(name, newName)
		d.Name = newName
	}
	return next, nil
}

// renameDevice carries a device's new name to its partition table, its
// partitions' names and everything that refers to either.
func (c *Config) renameDevice(from, to string) {
	if t, ok := c.Table(from); ok {
		for _, p := range t.Partitions {
			c.rename(PartitionName(from, p.Number), PartitionName(to, p.Number))
		}
	}
	for k := range c.Tables {
		if c.Tables[k].Disk == from {
			c.Tables[k].Disk = to
		}
	}
	c.rename(from, to)
	if c.BootDisk == from {
		c.BootDisk = to
	}
}
