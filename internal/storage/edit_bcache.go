package storage

import "slices"

// BcacheChange is MAAS's bcache update: "" keeps a field.
type BcacheChange struct {
	Name, Backing, CacheSet string
	Mode                    CacheMode
}

// UpdateBcache renames a bcache, moves it to another backing device or
// cache set, or changes its cache mode. Its filesystem and what is built
// on it follow a new name; a new backing device must be free.
func UpdateBcache(c Config, name string, ch BcacheChange) (Config, error) {
	i := slices.IndexFunc(c.Bcaches, func(b Bcache) bool { return b.Name == name })
	if i < 0 {
		return c, badRequest("No bcache %s.", name)
	}
	e := FieldErrors{}
	c.checkRename(e, name, ch.Name)
	if ch.Mode != "" && !slices.Contains([]CacheMode{WriteBack, WriteThrough, WriteAround}, ch.Mode) {
		e.Add("cache_mode", "Select a valid choice. %s is not one of the available choices.", ch.Mode)
	}
	if ch.CacheSet != "" {
		if _, ok := c.cacheSet(ch.CacheSet); !ok {
			e.Add("cache_set", "Select a valid choice. %s is not one of the available choices.", ch.CacheSet)
		}
	}
	if ch.Backing != "" && ch.Backing != c.Bcaches[i].Backing {
		if ch.Backing == name || ch.Backing == ch.Name {
			e.Add("backing_device", "A bcache cannot be its own backing device.")
		}
		c.needFree(e, "backing_device", []string{ch.Backing})
	}
	if err := e.Err(); err != nil {
		return c, err
	}
	next := c.clone()
	b := &next.Bcaches[i]
	if ch.Backing != "" {
		b.Backing = ch.Backing
	}
	if ch.CacheSet != "" {
		b.CacheSet = ch.CacheSet
	}
	if ch.Mode != "" {
		b.Mode = ch.Mode
	}
	if ch.Name != "" && ch.Name != name {
		next.renameDevice(name, ch.Name)
		b.Name = ch.Name
	}
	return next, nil
}

// RenameVirtual renames a RAID, bcache or logical volume (the block
// device update's name for a virtual device).
func RenameVirtual(c Config, dev, to string) (Config, error) {
	if slices.ContainsFunc(c.RAIDs, func(r RAID) bool { return r.Name == dev }) {
		return UpdateRAID(c, dev, GroupChange{Name: to})
	}
	if slices.ContainsFunc(c.Bcaches, func(b Bcache) bool { return b.Name == dev }) {
		return UpdateBcache(c, dev, BcacheChange{Name: to})
	}
	for vi, vg := range c.VolumeGroups {
		for li, lv := range vg.Volumes {
			if LVName(vg.Name, lv.Name) != dev {
				continue
			}
			full := LVName(vg.Name, to)
			switch {
			case to == lv.Name:
				return c, nil
			case !validName(to):
				return c, fieldErr("name", "%q is not a valid name: use 1 to 63 letters, digits and + _ . - (not starting with -).", to)
			case c.nameTaken(full):
				return c, fieldErr("name", "A device named %s already exists.", full)
			}
			next := c.clone()
			next.renameDevice(dev, full)
			next.VolumeGroups[vi].Volumes[li].Name = to
			return next, nil
		}
	}
	return c, badRequest("No virtual block device %s.", dev)
}

// checkRename checks a device's new name to (none when empty or the
// same): valid, and not another device's.
func (c Config) checkRename(e FieldErrors, name, to string) {
	if to == "" || to == name {
		return
	}
	if !validName(to) {
		e.Add("name", "%q is not a valid name: use 1 to 63 letters, digits and + _ . - (not starting with -).", to)
	} else if c.nameTaken(to) {
		e.Add("name", "A device named %s already exists.", to)
	}
}
