package storage

import (
	"cmp"
	"slices"
)

func (l *layout) cleanBcache() {
	l.cacheMode = WriteThrough
	switch m := CacheMode(l.p.CacheMode); m {
	case "":
	case WriteBack, WriteThrough, WriteAround:
		l.cacheMode = m
	default:
		l.e.Add("cache_mode", "Select a valid choice. %s is not one of the available choices (writeback, writethrough, writearound).", l.p.CacheMode)
	}
	if l.p.CacheDevice != "" {
		if d, ok := l.disk("cache_device", l.p.CacheDevice, l.boot.Name); ok {
			l.cache = &d
		}
	} else {
		l.cache = l.bestCache()
	}
	if l.cache != nil && l.cache.Name == l.root.Name {
		l.e.Add("cache_device", "%s holds the root partition; the cache needs a disk of its own.", l.cache.Name)
	}
	if l.p.CacheSize != "" && l.p.CacheNoPart {
		msg := "Cannot use cache_size and cache_no_part at the same time."
		l.e.Add("cache_size", "%s", msg)
		l.e.Add("cache_no_part", "%s", msg)
	} else if l.cache != nil && l.p.CacheSize != "" {
		l.cacheSize = l.size("cache_size", l.p.CacheSize, l.cache.Size, MinBlockDeviceSize, l.cache.Size)
	}
}

// bestCache is MAAS's choice: the smallest disk tagged ssd that is not
// the boot disk.
func (l *layout) bestCache() *Disk {
	disks := slices.Clone(l.m.Disks)
	slices.SortStableFunc(disks, func(a, b Disk) int {
		if a.Size != b.Size {
			return cmp.Compare(a.Size, b.Size)
		}
		return a.ID - b.ID
	})
	for _, d := range disks {
		if d.Name != l.boot.Name && slices.Contains(d.Tags, "ssd") {
			return &d
		}
	}
	return nil
}

// bcache is MAAS's BcacheStorageLayout: /boot (1 GiB by default), the
// root partition as the backing device, a cache set on the cache disk
// (a partition of cache_size, or the whole disk with cache_no_part).
func (l *layout) bcache(c *Config) {
	if l.cache == nil {
		if !l.p.AllowFallback {
			l.e.Add("__all__", "Node doesn't have an available cache device to setup bcache.")
			return
		}
		c.Layout = LayoutFlat
		l.flat(c)
		return
	}
	bootSize := l.bootSize
	if bootSize == 0 {
		bootSize = DefaultBcacheBootSize
	}
	backing := l.basic(c, bootSize)
	cacheDev := l.cache.Name
	if !l.p.CacheNoPart {
		t := newTable(*l.cache, GPT, false)
		cacheDev = t.add(l.cacheSize, false, PartData)
		c.Tables = append(c.Tables, t.table)
	}
	c.CacheSets = append(c.CacheSets, CacheSet{Name: "cache0", Device: cacheDev})
	c.Bcaches = append(c.Bcaches, Bcache{Name: "bcache0", Backing: backing, CacheSet: "cache0", Mode: l.cacheMode})
	c.Filesystems = append(c.Filesystems, Filesystem{Device: "bcache0", Type: Ext4, Label: "root", MountPoint: "/"})
}
