package storage

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
)

// DeviceRef names a matched device as constraints_by_type does: a block
// device id, or "partition:<id>".
type DeviceRef struct {
	ID        int
	Partition bool
}

func (r DeviceRef) MarshalJSON() ([]byte, error) {
	if r.Partition {
		return json.Marshal("partition:" + strconv.Itoa(r.ID))
	}
	return json.Marshal(r.ID)
}

// MatchStorage picks devices of c for the constraints as MAAS's
// nodes_by_storage does, and returns constraints_by_type's "storage"
// value (label → devices; unlabelled constraints match but are not
// listed), or false when c cannot satisfy them all.
//
// The first constraint is the root disk: the disk "/" lives on (through
// partitions, RAID, LVM or bcache, the first disk under it), or with the
// "partition" tag the partition holding "/". The others take unused
// disks (no table, no filesystem, no other use), or unused partitions
// with "partition", smallest first; most tags are matched first so the
// most specific ask is not starved.
func MatchStorage(cs []StorageConstraint, c Config) (map[string][]DeviceRef, bool) {
	out := map[string][]DeviceRef{}
	if len(cs) == 0 {
		return out, true
	}
	devs, err := c.Devices()
	if err != nil {
		return nil, false
	}
	root, ok := c.FilesystemAt("/")
	if !ok || root.Device == "" {
		return nil, false
	}
	taken := map[string]bool{}
	record := func(label, name string, ref DeviceRef) {
		taken[name] = true
		if label != "" {
			out[label] = append(out[label], ref)
		}
	}
	first := cs[0]
	if first.Partition() {
		p, disk, ok := c.partition(root.Device)
		if !ok || p.Size < first.Size || len(first.tagsBut()) > 0 {
			return nil, false // partitions carry no tags in Anvil
		}
		record(first.Label, disk+"-part"+strconv.Itoa(p.Number), DeviceRef{ID: p.ID, Partition: true})
	} else {
		d, ok := c.Disk(diskUnder(root.Device, devs))
		if !ok || d.Size < first.Size || !d.HasTags(first.Tags) {
			return nil, false
		}
		record(first.Label, d.Name, DeviceRef{ID: d.ID})
	}
	rest := slices.Clone(cs[1:])
	slices.SortStableFunc(rest, func(a, b StorageConstraint) int { return len(b.Tags) - len(a.Tags) })
	used := c.uses()
	for _, k := range rest {
		if k.Partition() {
			name, ref, ok := c.freePartition(k, used, taken)
			if !ok {
				return nil, false
			}
			record(k.Label, name, ref)
			continue
		}
		disks := slices.Clone(c.Disks)
		slices.SortStableFunc(disks, func(a, b Disk) int { return cmp.Compare(a.Size, b.Size) })
		i := slices.IndexFunc(disks, func(d Disk) bool {
			return len(used[d.Name]) == 0 && !taken[d.Name] && d.Size >= k.Size && d.HasTags(k.Tags)
		})
		if i < 0 {
			return nil, false
		}
		record(k.Label, disks[i].Name, DeviceRef{ID: disks[i].ID})
	}
	return out, true
}

// diskUnder follows the first parent down to a disk.
func diskUnder(name string, devs map[string]Device) string {
	for d := devs[name]; ; d = devs[d.Parents[0]] {
		if d.Kind == KindDisk || len(d.Parents) == 0 {
			return d.Name
		}
	}
}

func (c Config) partition(name string) (Partition, string, bool) {
	for _, t := range c.Tables {
		for _, p := range t.Partitions {
			if PartitionName(t.Disk, p.Number) == name {
				return p, t.Disk, true
			}
		}
	}
	return Partition{}, "", false
}

func (c Config) freePartition(k StorageConstraint, used map[string][]string, taken map[string]bool) (string, DeviceRef, bool) {
	if len(k.tagsBut()) > 0 {
		return "", DeviceRef{}, false
	}
	best, ref := "", DeviceRef{}
	var bestSize int64 = -1
	for _, t := range c.Tables {
		for _, p := range t.Partitions {
			n := PartitionName(t.Disk, p.Number)
			if len(used[n]) > 0 || taken[n] || p.Type != PartData || p.Size < k.Size {
				continue
			}
			if bestSize < 0 || p.Size < bestSize {
				best, ref, bestSize = n, DeviceRef{ID: p.ID, Partition: true}, p.Size
			}
		}
	}
	return best, ref, best != ""
}
