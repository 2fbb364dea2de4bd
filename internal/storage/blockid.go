package storage

// BlockID is the block device id of the device named dev (a disk, a
// RAID's or bcache's device, a logical volume), the reverse of
// DeviceByID; 0 for a partition or an unknown name.
func (c Config) BlockID(dev string) int {
	for _, d := range c.Disks {
		if d.Name == dev {
			return d.ID
		}
	}
	for _, r := range c.RAIDs {
		if r.Name == dev {
			return r.DeviceID
		}
	}
	for _, vg := range c.VolumeGroups {
		for _, lv := range vg.Volumes {
			if LVName(vg.Name, lv.Name) == dev {
				return lv.ID
			}
		}
	}
	for _, b := range c.Bcaches {
		if b.Name == dev {
			return b.DeviceID
		}
	}
	return 0
}

// DeviceUUID is the UUID of the virtual block device named dev (a RAID's
// or bcache's device, a logical volume); "" for a disk, a partition or an
// unknown name, which MAAS gives none.
func (c Config) DeviceUUID(dev string) string {
	for _, r := range c.RAIDs {
		if r.Name == dev {
			return r.DeviceUUID
		}
	}
	for _, vg := range c.VolumeGroups {
		for _, lv := range vg.Volumes {
			if LVName(vg.Name, lv.Name) == dev {
				return lv.UUID
			}
		}
	}
	for _, b := range c.Bcaches {
		if b.Name == dev {
			return b.DeviceUUID
		}
	}
	return ""
}
