package storage

import (
	"slices"
	"strings"
)

// WithUUIDs returns c with a UUID for every filesystem and cache set that
// lacks one, drawn from next (a random UUID in 8-4-4-4-12 form; tests
// pass a counter). FAT takes a volume id, made from the UUID's first 8
// digits, since that is all FAT holds.
func (c Config) WithUUIDs(next func() string) Config {
	c.Filesystems = slices.Clone(c.Filesystems)
	for i, f := range c.Filesystems {
		if f.UUID != "" || f.Type.Special() {
			continue
		}
		u := next()
		if f.Type == FAT32 || f.Type == VFAT {
			u = strings.ToUpper(u[:4] + "-" + u[4:8])
		}
		c.Filesystems[i].UUID = u
	}
	c.CacheSets = slices.Clone(c.CacheSets)
	for i := range c.CacheSets {
		if c.CacheSets[i].UUID == "" {
			c.CacheSets[i].UUID = next()
		}
	}
	return c
}
