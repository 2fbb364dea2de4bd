package storage

import "slices"

// WithIDs returns c with an id for everything the API addresses by id
// and lacks one: disks, partitions, RAIDs (and their devices), volume
// groups, logical volumes, cache sets, bcaches (and their devices). Ids
// come from c.NextID, one counter per machine, so an id is never given
// twice even after the object it named is gone; ids already set stay.
func (c Config) WithIDs() Config {
	c = c.clone()
	if c.NextID < 1 {
		c.NextID = 1
	}
	seen := c.maxID()
	if seen >= c.NextID {
		c.NextID = seen + 1
	}
	give := func(id *int) {
		if *id == 0 {
			*id = c.NextID
			c.NextID++
		}
	}
	for i := range c.Disks {
		give(&c.Disks[i].ID)
	}
	for i := range c.Tables {
		for j := range c.Tables[i].Partitions {
			give(&c.Tables[i].Partitions[j].ID)
		}
	}
	for i := range c.RAIDs {
		give(&c.RAIDs[i].ID)
		give(&c.RAIDs[i].DeviceID)
	}
	for i := range c.VolumeGroups {
		give(&c.VolumeGroups[i].ID)
		for j := range c.VolumeGroups[i].Volumes {
			give(&c.VolumeGroups[i].Volumes[j].ID)
		}
	}
	for i := range c.CacheSets {
		give(&c.CacheSets[i].ID)
	}
	for i := range c.Bcaches {
		give(&c.Bcaches[i].ID)
		give(&c.Bcaches[i].DeviceID)
	}
	return c
}

func (c Config) maxID() int {
	m := 0
	for _, id := range c.ids() {
		m = max(m, id)
	}
	return m
}

// ids lists every id set in c.
func (c Config) ids() []int {
	var out []int
	for _, d := range c.Disks {
		out = append(out, d.ID)
	}
	for _, t := range c.Tables {
		for _, p := range t.Partitions {
			out = append(out, p.ID)
		}
	}
	for _, r := range c.RAIDs {
		out = append(out, r.ID, r.DeviceID)
	}
	for _, vg := range c.VolumeGroups {
		out = append(out, vg.ID)
		for _, lv := range vg.Volumes {
			out = append(out, lv.ID)
		}
	}
	for _, cs := range c.CacheSets {
		out = append(out, cs.ID)
	}
	for _, b := range c.Bcaches {
		out = append(out, b.ID, b.DeviceID)
	}
	return out
}

// clone copies c deeply enough that edits of the copy leave c alone.
func (c Config) clone() Config {
	c.Disks = slices.Clone(c.Disks)
	for i := range c.Disks {
		c.Disks[i].Tags = slices.Clone(c.Disks[i].Tags)
	}
	c.Tables = slices.Clone(c.Tables)
	for i := range c.Tables {
		c.Tables[i].Partitions = slices.Clone(c.Tables[i].Partitions)
	}
	c.RAIDs = slices.Clone(c.RAIDs)
	for i := range c.RAIDs {
		c.RAIDs[i].Devices = slices.Clone(c.RAIDs[i].Devices)
		c.RAIDs[i].Spares = slices.Clone(c.RAIDs[i].Spares)
	}
	c.VolumeGroups = slices.Clone(c.VolumeGroups)
	for i := range c.VolumeGroups {
		c.VolumeGroups[i].Devices = slices.Clone(c.VolumeGroups[i].Devices)
		c.VolumeGroups[i].Volumes = slices.Clone(c.VolumeGroups[i].Volumes)
	}
	c.CacheSets = slices.Clone(c.CacheSets)
	c.Bcaches = slices.Clone(c.Bcaches)
	c.Filesystems = slices.Clone(c.Filesystems)
	return c
}

// Clone returns a deep copy of c.
func (c Config) Clone() Config { return c.clone() }

// Relayout is c replaced by next (a layout applied afresh) keeping the
// disks' ids and the id counter, so ids of the old objects are not given
// again to new ones.
func (c Config) Relayout(next Config) Config {
	next = next.clone()
	for i, d := range next.Disks {
		if old, ok := c.Disk(d.Name); ok {
			next.Disks[i].ID = old.ID
		}
	}
	next.NextID = max(c.NextID, c.maxID()+1)
	return next.WithIDs()
}

// SameDisks says whether two inventories' disks are the same hardware:
// the same names with the same serials, id paths and sizes. Recommissioning
// keeps a machine's layout only then.
func SameDisks(a, b []Disk) bool {
	if len(a) != len(b) {
		return false
	}
	key := func(d Disk) [4]any { return [4]any{d.Name, d.Serial, d.IDPath, d.Size} }
	have := map[[4]any]int{}
	for _, d := range a {
		have[key(d)]++
	}
	for _, d := range b {
		if have[key(d)] == 0 {
			return false
		}
		have[key(d)]--
	}
	return true
}

// DeviceByID finds the block device id names: a disk, a RAID's or a
// bcache's device, or a logical volume (partitions have ids of their own
// kind, see PartitionByID).
func (c Config) DeviceByID(id int) (string, bool) {
	if id <= 0 {
		return "", false
	}
	for _, d := range c.Disks {
		if d.ID == id {
			return d.Name, true
		}
	}
	for _, r := range c.RAIDs {
		if r.DeviceID == id {
			return r.Name, true
		}
	}
	for _, vg := range c.VolumeGroups {
		for _, lv := range vg.Volumes {
			if lv.ID == id {
				return LVName(vg.Name, lv.Name), true
			}
		}
	}
	for _, b := range c.Bcaches {
		if b.DeviceID == id {
			return b.Name, true
		}
	}
	return "", false
}

// PartitionByID finds partition id on the disk named disk ("" for any).
func (c Config) PartitionByID(disk string, id int) (string, bool) {
	for _, t := range c.Tables {
		for _, p := range t.Partitions {
			if p.ID == id && id > 0 && (disk == "" || t.Disk == disk) {
				return PartitionName(t.Disk, p.Number), true
			}
		}
	}
	return "", false
}
