package api

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/storage"
)

// updateBlockDevice is MAAS's block device update: on a Ready machine a
// disk's name, model, serial, id_path, size and block_size, and a
// virtual device's name (RAID, bcache, logical volume) and a logical
// volume's size; on a Deployed
// one only a disk's name, model, serial and id_path (MAAS's deployed
// form, which leaves out the other fields).
func (s *Server) updateBlockDevice(w http.ResponseWriter, r *request) error {
	m, _, err := s.storageMachine(r)
	if err != nil {
		return err
	}
	deployed := m.Status == machine.Deployed
	ch, err := diskChange(r, deployed)
	if err != nil {
		return err
	}
	rule := machine.StorageEdit{Deployed: true,
		NotReady:  "Cannot update block device because the machine is not Ready.",
		Forbidden: "Cannot update block device because you don't have the permissions on a Ready machine."}
	var dev string
	return s.edit(w, r, "update", rule, func(c storage.Config, _ storage.Firmware) (storage.Config, error) {
		if dev, err = blockName(r, c, "id"); err != nil {
			return c, err
		}
		if _, ok := c.Disk(dev); !ok {
			if deployed {
				return c, &machine.Violation{Msg: "Cannot update virtual block device because the machine is Deployed."}
			}
			if ch.Size != nil {
				// Only a logical volume's size may change (MAAS's rule).
				if c, err = storage.ResizeLV(c, dev, *ch.Size); err != nil {
					return c, err
				}
			}
			if ch.Name == nil {
				return c, nil
			}
			to := *ch.Name
			if vg, ok := lvGroup(c, dev); ok {
				to = strings.TrimPrefix(to, vg+"-") // MAAS names a volume by its own name
			}
			c, err = storage.RenameVirtual(c, dev, to)
			if err == nil {
				dev, _ = renamedTo(c, dev, to)
			}
			return c, err
		}
		c, err = storage.UpdateDisk(c, dev, ch)
		if ch.Name != nil && err == nil {
			dev = *ch.Name
		}
		return c, err
	}, func(v *storageView) any { return v.block(dev) })
}

// diskChange reads the fields of the update; a deployed machine's form
// has only name, model, serial and id_path.
func diskChange(r *request, deployed bool) (storage.DiskChange, error) {
	var ch storage.DiskChange
	str := func(name string) *string {
		if vs, ok := r.form[name]; ok {
			v := vs[len(vs)-1]
			return &v
		}
		return nil
	}
	ch.Name, ch.Model, ch.Serial, ch.IDPath = str("name"), str("model"), str("serial"), str("id_path")
	if ch.Name != nil && *ch.Name == "" {
		ch.Name = nil // MAAS's name is not required: empty keeps it
	}
	if deployed {
		return ch, nil
	}
	if v := str("size"); v != nil && *v != "" {
		n, err := storage.ParseSize(*v)
		if err != nil || n.IsPercent {
			return ch, badField("size", "Enter a whole number of bytes, or one with a K, M, G or T suffix.")
		}
		if n.Bytes > machine.MaxDiskBytes {
			return ch, badField("size", "Ensure this value is less than or equal to %d.", int64(machine.MaxDiskBytes))
		}
		ch.Size = &n.Bytes
	}
	if v := str("block_size"); v != nil && *v != "" {
		n, err := storage.ParseSize(*v)
		if err != nil || n.IsPercent || n.Bytes > machine.MaxBlockSize || n.Bytes >= machine.MinBlockSize && n.Bytes&(n.Bytes-1) != 0 {
			return ch, badField("block_size", "Enter a power of two from %d to %d.", machine.MinBlockSize, machine.MaxBlockSize)
		}
		bs := int(n.Bytes)
		ch.BlockSize = &bs
	}
	return ch, nil
}

func isLV(c storage.Config, dev string) bool {
	_, ok := lvGroup(c, dev)
	return ok
}

// lvGroup is the volume group of the logical volume named dev.
func lvGroup(c storage.Config, dev string) (string, bool) {
	for _, vg := range c.VolumeGroups {
		if slices.ContainsFunc(vg.Volumes, func(lv storage.LogicalVolume) bool { return storage.LVName(vg.Name, lv.Name) == dev }) {
			return vg.Name, true
		}
	}
	return "", false
}

// renamedTo is a renamed virtual device's new device name: a logical
// volume's carries its group's.
func renamedTo(c storage.Config, old, to string) (string, bool) {
	devs, err := c.Devices()
	if err != nil {
		return old, false
	}
	if _, ok := devs[to]; ok {
		return to, true
	}
	for _, vg := range c.VolumeGroups {
		if _, ok := devs[storage.LVName(vg.Name, to)]; ok {
			return storage.LVName(vg.Name, to), true
		}
	}
	return old, false
}

// bcacheUpdate is MAAS's bcache update: name, cache_set, backing_device
// or backing_partition, and cache_mode, on a Ready machine.
func (s *Server) bcacheUpdate(w http.ResponseWriter, r *request) error {
	var at int
	return s.edit(w, r, "update", readyOnly("update", "Bcache", "machine"), func(c storage.Config, _ storage.Firmware) (storage.Config, error) {
		i, err := groupByID(r, "Bcache", bcacheIDs(c))
		if err != nil {
			return c, err
		}
		at = i
		ch := storage.BcacheChange{Name: r.form.Get("name"), Mode: storage.CacheMode(r.form.Get("cache_mode"))}
		if r.form.Has("backing_device") || r.form.Has("backing_partition") {
			backing, err := deviceRefs(r, c, "backing_device", "backing_partition")
			if err != nil {
				return c, err
			}
			if len(backing) != 1 {
				return c, badField("__all__", "Either backing_device or backing_partition must be specified.")
			}
			ch.Backing = backing[0]
		}
		if set := r.form.Get("cache_set"); set != "" {
			ch.CacheSet = set
			for _, cs := range c.CacheSets {
				if strconv.Itoa(cs.ID) == set {
					ch.CacheSet = cs.Name
				}
			}
		}
		return storage.UpdateBcache(c, c.Bcaches[i].Name, ch)
	}, func(v *storageView) any { return v.bcache(v.c.Bcaches[at]) })
}
