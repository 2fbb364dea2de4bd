package api

import (
	"net/http"
	"strconv"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/storage"
)

// MAAS's volume groups, RAIDs, bcaches and cache sets of a machine.

// groupByID finds the index of the object of kind whose id the path
// names, by the ids list.
func groupByID(r *request, model string, ids []int) (int, error) {
	id, err := pathInt(r, "id", model)
	if err != nil {
		return 0, err
	}
	for i, x := range ids {
		if x == id {
			return i, nil
		}
	}
	return 0, noSuch(model)
}

// idsOf lists the ids of xs, in order.
func idsOf[T any](xs []T, id func(T) int) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = id(x)
	}
	return out
}

func vgIDs(c storage.Config) []int {
	return idsOf(c.VolumeGroups, func(x storage.VolumeGroup) int { return x.ID })
}
func raidIDs(c storage.Config) []int { return idsOf(c.RAIDs, func(x storage.RAID) int { return x.ID }) }
func bcacheIDs(c storage.Config) []int {
	return idsOf(c.Bcaches, func(x storage.Bcache) int { return x.ID })
}
func cacheSetIDs(c storage.Config) []int {
	return idsOf(c.CacheSets, func(x storage.CacheSet) int { return x.ID })
}

// listOf answers a collection rendered from the machine's configuration.
func (s *Server) listOf(render func(v *storageView) any) handlerFunc {
	return func(w http.ResponseWriter, r *request) error {
		_, v, err := s.storageMachine(r)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, render(v))
		return nil
	}
}

// oneOf answers the object the path names.
func (s *Server) oneOf(model string, ids func(storage.Config) []int, render func(v *storageView, i int) any) handlerFunc {
	return func(w http.ResponseWriter, r *request) error {
		_, v, err := s.storageMachine(r)
		if err != nil {
			return err
		}
		i, err := groupByID(r, model, ids(v.c))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, render(v, i))
		return nil
	}
}

// deleteOf deletes the object the path names with del.
func (s *Server) deleteOf(model, object string, ids func(storage.Config) []int, del func(c storage.Config, i int) (storage.Config, error)) handlerFunc {
	return func(w http.ResponseWriter, r *request) error {
		return s.edit(w, r, "delete", readyOnly("delete", object, "machine"), func(c storage.Config, _ storage.Firmware) (storage.Config, error) {
			i, err := groupByID(r, model, ids(c))
			if err != nil {
				return c, err
			}
			return del(c, i)
		}, nil)
	}
}

// updateGroup is PUT on a volume group or RAID: name, and MAAS's
// add_/remove_ block devices, partitions and spares.
func (s *Server) updateGroup(model, object string, ids func(storage.Config) []int,
	upd func(c storage.Config, i int, ch storage.GroupChange) (storage.Config, error), render func(v *storageView, i int) any) handlerFunc {
	return func(w http.ResponseWriter, r *request) error {
		var at int
		return s.edit(w, r, "update", readyOnly("update", object, "machine"), func(c storage.Config, _ storage.Firmware) (storage.Config, error) {
			i, err := groupByID(r, model, ids(c))
			if err != nil {
				return c, err
			}
			ch := storage.GroupChange{Name: r.form.Get("name")}
			for _, x := range []struct {
				list        *[]string
				field, part string
			}{
				{&ch.Add, "add_block_devices", "add_partitions"}, {&ch.Remove, "remove_block_devices", "remove_partitions"},
				{&ch.AddSpares, "add_spare_devices", "add_spare_partitions"}, {&ch.RemoveSpares, "remove_spare_devices", "remove_spare_partitions"},
			} {
				if *x.list, err = deviceRefs(r, c, x.field, x.part); err != nil {
					return c, err
				}
			}
			at = i
			return upd(c, i, ch)
		}, func(v *storageView) any { return render(v, at) })
	}
}

func (s *Server) volumeGroupsRoutes() []route {
	return []route{
		get("", authenticated, s.listOf(func(v *storageView) any {
			out := []vgJSON{}
			for _, vg := range v.c.VolumeGroups {
				out = append(out, v.vg(vg))
			}
			return out
		})),
		post("", authenticated, func(w http.ResponseWriter, r *request) error {
			name := r.form.Get("name")
			return s.edit(w, r, "create", readyOnly("create", "volume group", "node"), func(c storage.Config, _ storage.Firmware) (storage.Config, error) {
				devs, err := deviceRefs(r, c, "block_devices", "partitions")
				if err != nil {
					return c, err
				}
				return storage.CreateVG(c, name, devs)
			}, func(v *storageView) any { return v.vg(v.c.VolumeGroups[len(v.c.VolumeGroups)-1]) })
		}),
	}
}

func (s *Server) volumeGroupRoutes() []route {
	return []route{
		get("", authenticated, s.oneOf("VolumeGroup", vgIDs, func(v *storageView, i int) any { return v.vg(v.c.VolumeGroups[i]) })),
		put(authenticated, s.updateGroup("VolumeGroup", "volume group", vgIDs, func(c storage.Config, i int, ch storage.GroupChange) (storage.Config, error) {
			return storage.UpdateVG(c, c.VolumeGroups[i].Name, ch)
		}, func(v *storageView, i int) any { return v.vg(v.c.VolumeGroups[i]) })),
		del(authenticated, s.deleteOf("VolumeGroup", "volume group", vgIDs, func(c storage.Config, i int) (storage.Config, error) {
			return storage.DeleteVG(c, c.VolumeGroups[i].Name)
		})),
		post("create_logical_volume", authenticated, func(w http.ResponseWriter, r *request) error {
			var lvName string
			return s.edit(w, r, "create_logical_volume", readyOnly("create logical volume", "volume group", "node"), func(c storage.Config, _ storage.Firmware) (storage.Config, error) {
				i, err := groupByID(r, "VolumeGroup", vgIDs(c))
				if err != nil {
					return c, err
				}
				var next storage.Config
				next, lvName, err = storage.CreateLV(c, c.VolumeGroups[i].Name, r.form.Get("name"), r.form.Get("size"))
				return next, err
			}, func(v *storageView) any { return v.block(lvName) })
		}),
		post("delete_logical_volume", authenticated, func(w http.ResponseWriter, r *request) error {
			var vgIndex int
			return s.edit(w, r, "delete_logical_volume", readyOnly("delete logical volume", "volume group", "node"), func(c storage.Config, _ storage.Firmware) (storage.Config, error) {
				i, err := groupByID(r, "VolumeGroup", vgIDs(c))
				if err != nil {
					return c, err
				}
				id, err := strconv.Atoi(r.form.Get("id"))
				if err != nil {
					return c, badField("id", "This field is required: the logical volume's block device id.")
				}
				vgIndex = i
				return storage.DeleteLV(c, c.VolumeGroups[i].Name, id)
			}, func(v *storageView) any { return v.vg(v.c.VolumeGroups[vgIndex]) })
		}),
	}
}

func (s *Server) raidsRoutes() []route {
	return []route{
		get("", authenticated, s.listOf(func(v *storageView) any {
			out := []raidJSON{}
			for _, x := range v.c.RAIDs {
				out = append(out, v.raid(x))
			}
			return out
		})),
		post("", authenticated, func(w http.ResponseWriter, r *request) error {
			return s.edit(w, r, "create", readyOnly("create", "RAID", "node"), func(c storage.Config, _ storage.Firmware) (storage.Config, error) {
				devs, err := deviceRefs(r, c, "block_devices", "partitions")
				if err != nil {
					return c, err
				}
				spares, err := deviceRefs(r, c, "spare_devices", "spare_partitions")
				if err != nil {
					return c, err
				}
				if r.form.Get("level") == "" {
					return c, badField("level", "This field is required.")
				}
				return storage.CreateRAID(c, r.form.Get("name"), storage.RAIDLevel(r.form.Get("level")), devs, spares)
			}, func(v *storageView) any { return v.raid(v.c.RAIDs[len(v.c.RAIDs)-1]) })
		}),
	}
}

func (s *Server) raidRoutes() []route {
	return []route{
		get("", authenticated, s.oneOf("RAID", raidIDs, func(v *storageView, i int) any { return v.raid(v.c.RAIDs[i]) })),
		put(authenticated, s.updateGroup("RAID", "RAID", raidIDs, func(c storage.Config, i int, ch storage.GroupChange) (storage.Config, error) {
			return storage.UpdateRAID(c, c.RAIDs[i].Name, ch)
		}, func(v *storageView, i int) any { return v.raid(v.c.RAIDs[i]) })),
		del(authenticated, s.deleteOf("RAID", "RAID", raidIDs, func(c storage.Config, i int) (storage.Config, error) {
			return storage.DeleteRAID(c, c.RAIDs[i].Name)
		})),
	}
}

func (s *Server) bcachesRoutes() []route {
	return []route{
		get("", authenticated, s.listOf(func(v *storageView) any {
			out := []bcacheJSON{}
			for _, x := range v.c.Bcaches {
				out = append(out, v.bcache(x))
			}
			return out
		})),
		post("", authenticated, func(w http.ResponseWriter, r *request) error {
			return s.edit(w, r, "create", readyOnly("create", "bcache", "node"), func(c storage.Config, _ storage.Firmware) (storage.Config, error) {
				backing, err := deviceRefs(r, c, "backing_device", "backing_partition")
				if err != nil {
					return c, err
				}
				if len(backing) != 1 {
					return c, badField("__all__", "Either backing_device or backing_partition must be specified.")
				}
				set := r.form.Get("cache_set")
				for _, cs := range c.CacheSets {
					if strconv.Itoa(cs.ID) == set {
						set = cs.Name
					}
				}
				mode := storage.CacheMode(firstOr(r.form.Get("cache_mode"), string(storage.WriteThrough)))
				return storage.CreateBcache(c, r.form.Get("name"), backing[0], set, mode)
			}, func(v *storageView) any { return v.bcache(v.c.Bcaches[len(v.c.Bcaches)-1]) })
		}),
	}
}

func (s *Server) bcacheRoutes() []route {
	return []route{
		get("", authenticated, s.oneOf("Bcache", bcacheIDs, func(v *storageView, i int) any { return v.bcache(v.c.Bcaches[i]) })),
		put(authenticated, s.bcacheUpdate),
		del(authenticated, s.deleteOf("Bcache", "bcache", bcacheIDs, func(c storage.Config, i int) (storage.Config, error) {
			return storage.DeleteBcache(c, c.Bcaches[i].Name)
		})),
	}
}

func (s *Server) cacheSetsRoutes() []route {
	return []route{
		get("", authenticated, s.listOf(func(v *storageView) any {
			out := []cacheSetJSON{}
			for _, x := range v.c.CacheSets {
				out = append(out, v.cacheSet(x))
			}
			return out
		})),
		post("", authenticated, func(w http.ResponseWriter, r *request) error {
			return s.edit(w, r, "create", readyOnly("create", "cache set", "node"), func(c storage.Config, _ storage.Firmware) (storage.Config, error) {
				devs, err := deviceRefs(r, c, "cache_device", "cache_partition")
				if err != nil {
					return c, err
				}
				if len(devs) != 1 {
					return c, badField("__all__", "Either cache_device or cache_partition must be specified.")
				}
				return storage.CreateCacheSet(c, devs[0])
			}, func(v *storageView) any { return v.cacheSet(v.c.CacheSets[len(v.c.CacheSets)-1]) })
		}),
	}
}

func (s *Server) cacheSetRoutes() []route {
	return []route{
		get("", authenticated, s.oneOf("CacheSet", cacheSetIDs, func(v *storageView, i int) any { return v.cacheSet(v.c.CacheSets[i]) })),
		del(authenticated, s.deleteOf("CacheSet", "cache set", cacheSetIDs, func(c storage.Config, i int) (storage.Config, error) {
			return storage.DeleteCacheSet(c, c.CacheSets[i].Name)
		})),
	}
}

// setStorageLayout is MAAS's machine op=set_storage_layout.
func (s *Server) setStorageLayout(w http.ResponseWriter, r *request) error {
	layout := r.form.Get("storage_layout")
	noPart, err := boolParam(r, "cache_no_part")
	if err != nil {
		return err
	}
	f := r.form.Get
	p := storage.LayoutParams{
		BootSize: f("boot_size"), RootSize: f("root_size"), RootDevice: f("root_device"),
		VGName: f("vg_name"), LVName: f("lv_name"), LVSize: f("lv_size"),
		CacheDevice: f("cache_device"), CacheMode: f("cache_mode"), CacheSize: f("cache_size"), CacheNoPart: noPart,
	}
	m, err := s.svc.SetStorageLayout(r.Context(), r.who.actor(), r.id, layout, p)
	if err != nil {
		return err
	}
	return s.writeMachine(w, r, http.StatusOK, &m)
}

// mountSpecial and unmountSpecial are MAAS's machine ops for tmpfs and
// ramfs.
func (s *Server) mountSpecial(w http.ResponseWriter, r *request) error {
	m, err := s.svc.EditStorage(r.Context(), r.who.actor(), r.id, "mount_special", specialRule("mount"),
		func(c storage.Config, _ storage.Firmware) (storage.Config, error) {
			if r.form.Get("fstype") == "" {
				return c, badField("fstype", "This field is required.")
			}
			return storage.MountSpecial(c, storage.FSType(r.form.Get("fstype")), r.form.Get("mount_point"), r.form.Get("mount_options"))
		})
	if err != nil {
		return err
	}
	return s.writeMachine(w, r, http.StatusOK, &m)
}

func (s *Server) unmountSpecial(w http.ResponseWriter, r *request) error {
	m, err := s.svc.EditStorage(r.Context(), r.who.actor(), r.id, "unmount_special", specialRule("unmount"),
		func(c storage.Config, _ storage.Firmware) (storage.Config, error) {
			return storage.UnmountSpecial(c, r.form.Get("mount_point"))
		})
	if err != nil {
		return err
	}
	return s.writeMachine(w, r, http.StatusOK, &m)
}

func specialRule(verb string) machine.StorageEdit {
	return machine.StorageEdit{
		Allocated: true,
		NotReady:  "Cannot " + verb + " the filesystem because the machine is not Ready or Allocated.",
		Forbidden: "You do not have permission to " + verb + " the filesystem on this machine.",
	}
}
