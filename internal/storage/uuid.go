package storage

import (
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
)

// RandomUUID is a random (version 4) UUID, as MAAS makes for its storage
// objects.
func RandomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

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

// WithAllUUIDs is WithUUIDs (drawing first for what it fills, so its
// UUIDs are the same for the same next) and then a UUID for every other
// object MAAS makes one with and lacks one: in-memory filesystems,
// partitions, RAIDs and their block devices, volume groups, logical
// volumes, bcaches and their block devices. The region calls it
// whenever it stores a configuration, so each object has its UUID from
// the start and keeps it across reads and edits.
func (c Config) WithAllUUIDs(next func() string) Config {
	c = c.WithUUIDs(next)
	c = c.clone()
	give := func(u *string) {
		if *u == "" {
			*u = next()
		}
	}
	for i := range c.Filesystems {
		if c.Filesystems[i].Type.Special() {
			give(&c.Filesystems[i].UUID)
		}
	}
	for i := range c.Tables {
		for j := range c.Tables[i].Partitions {
			give(&c.Tables[i].Partitions[j].UUID)
		}
	}
	for i := range c.RAIDs {
		give(&c.RAIDs[i].UUID)
		give(&c.RAIDs[i].DeviceUUID)
	}
	for i := range c.VolumeGroups {
		give(&c.VolumeGroups[i].UUID)
		for j := range c.VolumeGroups[i].Volumes {
			give(&c.VolumeGroups[i].Volumes[j].UUID)
		}
	}
	for i := range c.Bcaches {
		give(&c.Bcaches[i].UUID)
		give(&c.Bcaches[i].DeviceUUID)
	}
	return c
}

// MissingUUIDs says whether WithAllUUIDs would add any UUID to c.
func (c Config) MissingUUIDs() bool {
	n := 0
	c.WithAllUUIDs(func() string { n++; return "00000000-0000-4000-8000-000000000000" })
	return n > 0
}
