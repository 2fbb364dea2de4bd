package storage

import "slices"

// rename rewrites every reference to device from to to.
func (c *Config) rename(from, to string) {
	swap := func(list []string) {
		for i, d := range list {
			if d == from {
				list[i] = to
			}
		}
	}
	for i := range c.RAIDs {
		swap(c.RAIDs[i].Devices)
		swap(c.RAIDs[i].Spares)
	}
	for i := range c.VolumeGroups {
		swap(c.VolumeGroups[i].Devices)
	}
	for i := range c.Bcaches {
		if c.Bcaches[i].Backing == from {
			c.Bcaches[i].Backing = to
		}
	}
	for i := range c.CacheSets {
		if c.CacheSets[i].Device == from {
			c.CacheSets[i].Device = to
		}
	}
	for i := range c.Filesystems {
		if c.Filesystems[i].Device == from {
			c.Filesystems[i].Device = to
		}
	}
}

// GroupChange is an update of a RAID's or volume group's name and
// members (MAAS's add_block_devices, remove_partitions, ...).
type GroupChange struct {
	Name                    string // "" keeps the name
	Add, Remove             []string
	AddSpares, RemoveSpares []string
}

// removeAll drops the members of rm from list; one not there is an error
// for field.
func removeAll(e FieldErrors, field string, list, rm []string) []string {
	for _, d := range rm {
		if !slices.Contains(list, d) {
			e.Add(field, "%s is not one of the devices.", d)
		}
	}
	return slices.DeleteFunc(list, func(d string) bool { return slices.Contains(rm, d) })
}

// UpdateVG renames a volume group or changes its physical volumes; what
// is left must still hold its logical volumes.
func UpdateVG(c Config, name string, ch GroupChange) (Config, error) {
	i := slices.IndexFunc(c.VolumeGroups, func(v VolumeGroup) bool { return v.Name == name })
	if i < 0 {
		return c, badRequest("No volume group %s.", name)
	}
	e := FieldErrors{}
	if ch.Name != "" && ch.Name != name {
		if !validName(ch.Name) {
			e.Add("name", "%q is not a valid name: use 1 to 63 letters, digits and + _ . - (not starting with -).", ch.Name)
		} else if c.nameTaken(ch.Name) {
			e.Add("name", "Volume group with this name already exists.")
		}
	}
	c.needFree(e, "add_block_devices", ch.Add)
	next := c.clone()
	vg := &next.VolumeGroups[i]
	vg.Devices = removeAll(e, "remove_block_devices", append(vg.Devices, ch.Add...), ch.Remove)
	if len(vg.Devices) == 0 {
		e.Add("__all__", "At least one valid block device or partition is required.")
	}
	if err := e.Err(); err != nil {
		return c, err
	}
	if devs, err := next.Devices(); err == nil {
		var used int64
		for _, lv := range vg.Volumes {
			used += lv.Size
		}
		if VGSize(*vg, devs) < used {
			return c, fieldErr("remove_block_devices", "Volume group %s would be smaller than its logical volumes (%d bytes).", name, used)
		}
	}
	if ch.Name != "" && ch.Name != name {
		for _, lv := range vg.Volumes {
			next.rename(LVName(name, lv.Name), LVName(ch.Name, lv.Name))
		}
		vg.Name = ch.Name
	}
	return next, nil
}

// UpdateRAID renames a RAID or changes its members and spares; the
// result must keep its level's rule.
func UpdateRAID(c Config, name string, ch GroupChange) (Config, error) {
	i := slices.IndexFunc(c.RAIDs, func(r RAID) bool { return r.Name == name })
	if i < 0 {
		return c, badRequest("No RAID %s.", name)
	}
	e := FieldErrors{}
	c.checkRename(e, name, ch.Name)
	c.needFree(e, "add_block_devices", ch.Add)
	c.needFree(e, "add_spare_devices", ch.AddSpares)
	next := c.clone()
	r := &next.RAIDs[i]
	r.Devices = removeAll(e, "remove_block_devices", append(r.Devices, ch.Add...), ch.Remove)
	r.Spares = removeAll(e, "remove_spare_devices", append(r.Spares, ch.AddSpares...), ch.RemoveSpares)
	if n := raidMinimum[r.Level]; len(r.Devices) < n || (r.Level == RAID0 && len(r.Spares) > 0) {
		e.Add("__all__", "%s", raidRule[r.Level])
	}
	if err := e.Err(); err != nil {
		return c, err
	}
	if ch.Name != "" && ch.Name != name {
		next.rename(name, ch.Name)
		r.Name = ch.Name
	}
	return next, nil
}
