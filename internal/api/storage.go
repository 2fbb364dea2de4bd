package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/region"
	"github.com/anvilmetal/anvil/internal/storage"
)

// MAAS's block device and partition API over a machine's storage
// configuration. The core decides (package storage's edits, machine's
// status rules); these handlers read parameters and render.

// storageMachine is the machine the path names with its configuration.
func (s *Server) storageMachine(r *request) (machine.Machine, *storageView, error) {
	m, err := s.visibleMachine(r)
	if err != nil {
		return m, nil, namedNotFound(err, "Machine")
	}
	return m, newStorageView(m.SystemID, region.StorageOf(&m)), nil
}

// pathInt is a numeric path parameter; anything else names nothing.
func pathInt(r *request, name, model string) (int, error) {
	n, err := strconv.Atoi(r.PathValue(name))
	if err != nil || n <= 0 {
		return 0, noSuch(model)
	}
	return n, nil
}

// blockName resolves the block device the path's param names.
func blockName(r *request, c storage.Config, param string) (string, error) {
	id, err := pathInt(r, param, "BlockDevice")
	if err != nil {
		return "", err
	}
	if name, ok := c.DeviceByID(id); ok {
		return name, nil
	}
	return "", noSuch("BlockDevice")
}

// partName resolves the partition of the path.
func partName(r *request, c storage.Config) (string, error) {
	disk, err := blockName(r, c, "device_id")
	if err != nil {
		return "", err
	}
	id, err := pathInt(r, "id", "Partition")
	if err != nil {
		return "", err
	}
	if name, ok := c.PartitionByID(disk, id); ok {
		return name, nil
	}
	return "", noSuch("Partition")
}

// edit runs one storage edit for the machine of the path and answers
// what render makes of the result.
func (s *Server) edit(w http.ResponseWriter, r *request, what machine.Action, rule machine.StorageEdit,
	fn func(c storage.Config, fw storage.Firmware) (storage.Config, error), render func(v *storageView) any) error {
	m, err := s.svc.EditStorage(r.Context(), r.who.actor(), r.id, what, rule, fn)
	if err != nil {
		return namedNotFound(err, "Machine")
	}
	if render == nil {
		writeNoContent(w)
		return nil
	}
	writeJSON(w, http.StatusOK, render(newStorageView(m.SystemID, region.StorageOf(&m))))
	return nil
}

// MAAS's status rules and words, per object and edit.
func readyOnly(verb, object, node string) machine.StorageEdit {
	return machine.StorageEdit{
		NotReady:  "Cannot " + verb + " " + object + " because the " + node + " is not Ready.",
		Forbidden: "Cannot " + verb + " " + object + " because you don't have the permissions on a Ready machine.",
	}
}

func readyOrAllocated(verb, object, node string) machine.StorageEdit {
	return machine.StorageEdit{
		Allocated: true,
		NotReady:  "Cannot " + verb + " " + object + " because the " + node + " is not Ready or Allocated.",
		Forbidden: "Cannot " + verb + " " + object + " because you don't have the permissions on a Ready machine.",
	}
}

func (s *Server) blockDevicesRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			_, v, err := s.storageMachine(r)
			if err != nil {
				return err
			}
			out := []blockJSON{}
			for _, d := range v.c.Disks {
				out = append(out, v.block(d.Name))
			}
			writeJSON(w, http.StatusOK, append(out, v.virtual()...))
			return nil
		}),
		post("", authenticated, s.createBlockDevice),
	}
}

// createBlockDevice adds a physical disk by hand, as MAAS's create does.
func (s *Server) createBlockDevice(w http.ResponseWriter, r *request) error {
	name := r.form.Get("name")
	var added string
	return s.edit(w, r, "create", readyOnly("create", "block device", "machine"), func(c storage.Config, _ storage.Firmware) (storage.Config, error) {
		e := storage.FieldErrors{}
		d := storage.Disk{Name: name, Model: r.form.Get("model"), Serial: r.form.Get("serial"), IDPath: r.form.Get("id_path"), Tags: []string{}}
		if name == "" {
			e.Add("name", "This field is required.")
		} else if _, ok := c.Disk(name); ok {
			e.Add("name", "A block device named %s already exists on this machine.", name)
		}
		size, err := strconv.ParseInt(r.form.Get("size"), 10, 64)
		switch {
		case r.form.Get("size") == "":
			e.Add("size", "This field is required.")
		case err != nil:
			e.Add("size", "Enter a whole number.")
		case size < storage.MinBlockDeviceSize:
			e.Add("size", "Ensure this value is greater than or equal to %d.", storage.MinBlockDeviceSize)
		case size > machine.MaxDiskBytes:
			e.Add("size", "Ensure this value is less than or equal to %d.", int64(machine.MaxDiskBytes))
		}
		bs, err := strconv.Atoi(r.form.Get("block_size"))
		switch {
		case r.form.Get("block_size") == "":
			e.Add("block_size", "This field is required.")
		case err != nil || bs < 512:
			e.Add("block_size", "Ensure this value is greater than or equal to 512.")
		case bs > machine.MaxBlockSize || bs&(bs-1) != 0:
			e.Add("block_size", "Enter a power of two from %d to %d.", machine.MinBlockSize, machine.MaxBlockSize)
		}
		if d.IDPath == "" && (d.Model == "" || d.Serial == "") {
			e.Add("__all__", "serial/model are required if id_path is not provided.")
		}
		if err := e.Err(); err != nil {
			return c, err
		}
		d.Size, d.BlockSize, added = size, bs, name
		c = c.Clone()
		c.Disks = append(c.Disks, d)
		return c, nil
	}, func(v *storageView) any { return v.block(added) })
}

func (s *Server) blockDeviceRoutes() []route {
	// one resolves the device, runs an edit on it and answers the device.
	one := func(what machine.Action, rule machine.StorageEdit, fn func(r *request, c storage.Config, dev string) (storage.Config, error)) handlerFunc {
		return func(w http.ResponseWriter, r *request) error {
			var dev string
			return s.edit(w, r, what, rule, func(c storage.Config, _ storage.Firmware) (storage.Config, error) {
				var err error
				if dev, err = blockName(r, c, "id"); err != nil {
					return c, err
				}
				return fn(r, c, dev)
			}, func(v *storageView) any { return v.block(dev) })
		}
	}
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			_, v, err := s.storageMachine(r)
			if err != nil {
				return err
			}
			dev, err := blockName(r, v.c, "id")
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, v.block(dev))
			return nil
		}),
		put(authenticated, s.updateBlockDevice),
		del(authenticated, func(w http.ResponseWriter, r *request) error {
			return s.edit(w, r, "delete", readyOnly("delete", "block device", "machine"), func(c storage.Config, _ storage.Firmware) (storage.Config, error) {
				dev, err := blockName(r, c, "id")
				if err != nil {
					return c, err
				}
				return deleteBlockDevice(c, dev)
			}, nil)
		}),
		post("add_tag", authenticated, one("add_tag", readyOnly("update", "block device", "machine"), func(r *request, c storage.Config, dev string) (storage.Config, error) {
			return storage.TagDisk(c, dev, r.form.Get("tag"), true)
		})),
		post("remove_tag", authenticated, one("remove_tag", readyOnly("update", "block device", "machine"), func(r *request, c storage.Config, dev string) (storage.Config, error) {
			return storage.TagDisk(c, dev, r.form.Get("tag"), false)
		})),
		post("format", authenticated, one("format", readyOrAllocated("format", "block device", "machine"), formatDev)),
		post("unformat", authenticated, one("unformat", readyOrAllocated("unformat", "block device", "machine"), func(_ *request, c storage.Config, dev string) (storage.Config, error) {
			return storage.Unformat(c, dev, "block device")
		})),
		post("mount", authenticated, one("mount", readyOrAllocated("mount", "block device", "machine"), mountDev)),
		post("unmount", authenticated, one("unmount", readyOrAllocated("unmount", "block device", "machine"), func(_ *request, c storage.Config, dev string) (storage.Config, error) {
			return storage.Unmount(c, dev, "block device")
		})),
		post("set_boot_disk", authenticated, one("set_boot_disk", readyOnly("set boot disk", "block device", "machine"), func(_ *request, c storage.Config, dev string) (storage.Config, error) {
			return storage.SetBootDisk(c, dev)
		})),
	}
}

func formatDev(r *request, c storage.Config, dev string) (storage.Config, error) {
	fs := r.form.Get("fstype")
	if fs == "" {
		return c, badField("fstype", "This field is required.")
	}
	return storage.Format(c, dev, storage.FSType(fs), r.form.Get("label"), r.form.Get("uuid"))
}

func mountDev(r *request, c storage.Config, dev string) (storage.Config, error) {
	return storage.Mount(c, dev, r.form.Get("mount_point"), r.form.Get("mount_options"))
}

// updateBlockDevice is PUT: a physical disk's model, serial and id_path
// (what commissioning could not read). Names are what everything built
// on a device refers to, so Anvil does not rename devices.
// deleteBlockDevice removes a disk, or the RAID, logical volume or
// bcache a virtual device is.
func deleteBlockDevice(c storage.Config, dev string) (storage.Config, error) {
	for _, r := range c.RAIDs {
		if r.Name == dev {
			return storage.DeleteRAID(c, dev)
		}
	}
	for _, b := range c.Bcaches {
		if b.Name == dev {
			return storage.DeleteBcache(c, dev)
		}
	}
	for _, vg := range c.VolumeGroups {
		for _, lv := range vg.Volumes {
			if storage.LVName(vg.Name, lv.Name) == dev {
				return storage.DeleteLV(c, vg.Name, lv.ID)
			}
		}
	}
	if u := c.GroupUse(dev); u != "" {
		return c, &storage.BadRequest{Msg: "Cannot delete block device " + dev + ": it is in use (" + u + ")."}
	}
	if _, ok := c.Table(dev); ok {
		return c, &storage.BadRequest{Msg: "Cannot delete block device " + dev + ": it has a partition table; delete its partitions first."}
	}
	c, _ = storage.Unformat(c, dev, "block device")
	c = c.Clone()
	for i, d := range c.Disks {
		if d.Name == dev {
			c.Disks = append(c.Disks[:i], c.Disks[i+1:]...)
			break
		}
	}
	if c.BootDisk == dev {
		c.BootDisk = storage.DefaultBootDisk(c.Disks)
	}
	return c, nil
}

func (s *Server) partitionsRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			_, v, err := s.storageMachine(r)
			if err != nil {
				return err
			}
			disk, err := blockName(r, v.c, "device_id")
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, v.block(disk).Partitions)
			return nil
		}),
		post("", authenticated, func(w http.ResponseWriter, r *request) error {
			bootable, err := boolParam(r, "bootable")
			if err != nil {
				return err
			}
			var disk, name string
			return s.edit(w, r, "create", readyOnly("create", "partition", "node"), func(c storage.Config, fw storage.Firmware) (storage.Config, error) {
				if disk, err = blockName(r, c, "device_id"); err != nil {
					return c, err
				}
				var next storage.Config
				next, name, err = storage.AddPartition(c, fw, disk, r.form.Get("size"), bootable)
				return next, err
			}, func(v *storageView) any { return v.member(name) })
		}),
	}
}

func (s *Server) partitionRoutes() []route {
	one := func(what machine.Action, rule machine.StorageEdit, fn func(r *request, c storage.Config, part string) (storage.Config, error)) handlerFunc {
		return func(w http.ResponseWriter, r *request) error {
			var part string
			return s.edit(w, r, what, rule, func(c storage.Config, _ storage.Firmware) (storage.Config, error) {
				var err error
				if part, err = partName(r, c); err != nil {
					return c, err
				}
				return fn(r, c, part)
			}, func(v *storageView) any { return v.member(part) })
		}
	}
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			_, v, err := s.storageMachine(r)
			if err != nil {
				return err
			}
			part, err := partName(r, v.c)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, v.member(part))
			return nil
		}),
		del(authenticated, func(w http.ResponseWriter, r *request) error {
			return s.edit(w, r, "delete", readyOnly("delete", "block device", "node"), func(c storage.Config, _ storage.Firmware) (storage.Config, error) {
				part, err := partName(r, c)
				if err != nil {
					return c, err
				}
				return storage.DeletePartition(c, part)
			}, nil)
		}),
		post("format", authenticated, one("format", readyOrAllocated("format", "partition", "node"), formatDev)),
		post("unformat", authenticated, one("unformat", readyOrAllocated("unformat", "partition", "node"), func(_ *request, c storage.Config, part string) (storage.Config, error) {
			return storage.Unformat(c, part, "partition")
		})),
		post("mount", authenticated, one("mount", readyOrAllocated("mount", "partition", "node"), mountDev)),
		post("unmount", authenticated, one("unmount", readyOrAllocated("unmount", "partition", "node"), func(_ *request, c storage.Config, part string) (storage.Config, error) {
			return storage.Unmount(c, part, "partition")
		})),
		post("add_tag", authenticated, one("add_tag", readyOnly("update", "partition", "node"), func(r *request, c storage.Config, part string) (storage.Config, error) {
			return storage.TagPartition(c, part, r.form.Get("tag"), true)
		})),
		post("remove_tag", authenticated, one("remove_tag", readyOnly("update", "partition", "node"), func(r *request, c storage.Config, part string) (storage.Config, error) {
			return storage.TagPartition(c, part, r.form.Get("tag"), false)
		})),
	}
}

// deviceRefs resolves a group's members given by id or name: block
// devices from field, partitions from partField.
func deviceRefs(r *request, c storage.Config, field, partField string) ([]string, error) {
	var out []string
	for _, f := range []string{field, partField} {
		if f == "" {
			continue
		}
		for _, v := range r.form[f] {
			name, ok := deviceRef(c, strings.TrimSpace(v), f == partField)
			if !ok {
				return nil, badField(f, "Select a valid choice. %s is not one of the available choices.", v)
			}
			out = append(out, name)
		}
	}
	return out, nil
}

func deviceRef(c storage.Config, v string, partition bool) (string, bool) {
	if id, err := strconv.Atoi(v); err == nil {
		if partition {
			return c.PartitionByID("", id)
		}
		return c.DeviceByID(id)
	}
	devs, err := c.Devices()
	if err != nil {
		return "", false
	}
	d, ok := devs[v]
	return v, ok && (d.Kind == storage.KindPartition) == partition
}

// storageResources registers MAAS's storage handlers under nodes/.
func (s *Server) storageResources() {
	n := "nodes/{system_id}/"
	for _, res := range []resource{
		{name: "BlockDevicesHandler", path: n + "blockdevices/", notFound: "Machine", routes: s.blockDevicesRoutes()},
		{name: "BlockDeviceHandler", path: n + "blockdevices/{id}/", routes: s.blockDeviceRoutes()},
		{name: "PartitionsHandler", path: n + "blockdevices/{device_id}/partitions/", notFound: "Machine", routes: s.partitionsRoutes()},
		// MAAS's path has no trailing slash and takes partitions/ too.
		{name: "PartitionHandler", path: n + "blockdevices/{device_id}/partition/{id}", aliases: []string{n + "blockdevices/{device_id}/partitions/{id}"}, routes: s.partitionRoutes()},
		{name: "VolumeGroupsHandler", path: n + "volume-groups/", notFound: "Machine", routes: s.volumeGroupsRoutes()},
		{name: "VolumeGroupHandler", path: n + "volume-group/{id}/", aliases: []string{n + "volume-groups/{id}/"}, routes: s.volumeGroupRoutes()},
		{name: "RaidsHandler", path: n + "raids/", notFound: "Machine", routes: s.raidsRoutes()},
		{name: "RaidHandler", path: n + "raid/{id}/", notFound: "RAID", routes: s.raidRoutes()},
		{name: "BcachesHandler", path: n + "bcaches/", notFound: "Machine", routes: s.bcachesRoutes()},
		{name: "BcacheHandler", path: n + "bcache/{id}/", routes: s.bcacheRoutes()},
		{name: "BcacheCacheSetsHandler", path: n + "bcache-cache-sets/", notFound: "Machine", routes: s.cacheSetsRoutes()},
		{name: "BcacheCacheSetHandler", path: n + "bcache-cache-set/{id}/", notFound: "CacheSet", routes: s.cacheSetRoutes()},
	} {
		s.handle(res)
	}
}
