package api_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	gmc "github.com/canonical/gomaasclient/client"
	"github.com/canonical/gomaasclient/entity"

	"github.com/anvilmetal/anvil/internal/machine"
)

// TestBlockDeviceAndBcacheUpdate: gomaasclient's BlockDevice.Update and
// BCache.Update (terraform-provider-maas's block device and bcache
// resources) rename a disk, whose partition and filesystem follow, and
// change a bcache; the refusals are MAAS's and store nothing.
func TestBlockDeviceAndBcacheUpdate(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		sid, c, must := e.blankForGomaas("upd1", "52:54:00:5a:07:01")
		n := "nodes/" + sid + "/"
		part, err := c.BlockDevicePartitions.Create(sid, 1, &entity.BlockDevicePartitionParams{Size: 4 << 30})
		must("BlockDevicePartitions.Create", err)
		_, err = c.BlockDevicePartition.Format(sid, 1, part.ID, "ext4", "root")
		must("Format", err)
		_, err = c.BlockDevicePartition.Mount(sid, 1, part.ID, "/", "")
		must("Mount", err)

		// Rename sda with a new model: the partition and its filesystem
		// go with it, and the boot disk is the renamed one.
		bd, err := c.BlockDevice.Update(sid, 1, &entity.BlockDeviceParams{Name: "system", Model: "NEW MODEL"})
		must("BlockDevice.Update", err)
		if bd.Name != "system" || bd.Model != "NEW MODEL" || bd.Serial != "A" || bd.ID != 1 {
			t.Fatalf("updated: %+v", bd)
		}
		s := e.storage(sid)
		if s.Physical[0].Name != "system" || len(s.Physical[0].Partitions) != 1 || s.Physical[0].Partitions[0].Filesystem == nil ||
			*s.Physical[0].Partitions[0].Filesystem.MountPoint != "/" || s.BootDisk == nil || s.BootDisk.Name != "system" {
			t.Fatalf("after the rename: %+v", s.Physical[0])
		}
		var named struct {
			Path string `json:"path"`
		}
		e.must(200, "GET", n+"blockdevices/1/partition/"+strconv.Itoa(part.ID), e.admin, nil, &named)
		if !strings.HasSuffix(named.Path, "/system-part1") {
			t.Errorf("partition path %q after the disk's rename", named.Path)
		}
		// size and block_size on a Ready machine.
		bd, err = c.BlockDevice.Update(sid, 3, &entity.BlockDeviceParams{Size: 7 * gib, BlockSize: 4096})
		must("BlockDevice.Update size", err)
		if bd.Size != 7*gib || bd.BlockSize != 4096 {
			t.Errorf("size update: %+v", bd)
		}

		// Refusals: nothing stored.
		before := e.rawStorage(sid)
		for _, c := range []struct {
			path string
			form url.Values
			want string
		}{
			{"blockdevices/2/", url.Values{"name": {"sdc"}}, "already exists"},
			{"blockdevices/2/", url.Values{"name": {"-bad"}}, "not a valid name"},
			{"blockdevices/1/", url.Values{"size": {"1000000000"}}, "past the new size"},
			{"blockdevices/2/", url.Values{"size": {"1000"}}, "greater than or equal to 4194304"},
			{"blockdevices/2/", url.Values{"size": {"50%"}}, "whole number"},
			{"blockdevices/2/", url.Values{"id_path": {"disk/by-id/x"}}, "absolute path"},
			{"blockdevices/2/", url.Values{"serial": {""}}, "serial/model are required"},
			{"blockdevices/2/", url.Values{"block_size": {"100"}}, "greater than or equal to 512"},
			// Sizes no disk has: plans and sums of them must not overflow.
			{"blockdevices/2/", url.Values{"size": {"9E"}}, "less than or equal to 4503599627370496"},
			{"blockdevices/2/", url.Values{"block_size": {"1000"}}, "power of two"},
			{"blockdevices/2/", url.Values{"block_size": {"1048576"}}, "power of two"},
		} {
			code, b := e.call(http.MethodPut, n+c.path, e.admin, c.form)
			if code != http.StatusBadRequest || !strings.Contains(string(b), c.want) {
				t.Errorf("PUT %s %v: %d %s, want 400 %q", c.path, c.form, code, b, c.want)
			}
		}
		if after := e.rawStorage(sid); after != before {
			t.Errorf("a refused update changed the storage:\n%s\n%s", before, after)
		}

		// A bcache: sdc caches sdb; its name, mode and cache set change.
		cs, err := c.BCacheCacheSets.Create(sid, &entity.BCacheCacheSetParams{CacheDevice: "3"})
		must("BCacheCacheSets.Create", err)
		bc, err := c.BCaches.Create(sid, &entity.BCacheParams{Name: "bcache0", CacheSet: strconv.Itoa(cs.ID), BackingDevice: "2", CacheMode: "writethrough"})
		must("BCaches.Create", err)
		bc, err = c.BCache.Update(sid, bc.ID, &entity.BCacheParams{Name: "fast0", CacheMode: "writeback"})
		must("BCache.Update", err)
		if bc.Name != "fast0" || bc.CacheMode != "writeback" {
			t.Fatalf("bcache update: %+v", bc)
		}
		before = e.rawStorage(sid)
		for form, want := range map[string]string{"cache_mode=sometimes": "not one of the available choices", "cache_set=99": "cache_set", "backing_device=3": "already in use"} {
			k, v, _ := strings.Cut(form, "=")
			code, b := e.call(http.MethodPut, n+"bcache/"+strconv.Itoa(bc.ID)+"/", e.admin, url.Values{k: {v}})
			if code != http.StatusBadRequest || !strings.Contains(string(b), want) {
				t.Errorf("bcache %s: %d %s, want 400 %q", form, code, b, want)
			}
		}
		if after := e.rawStorage(sid); after != before {
			t.Errorf("a refused bcache update changed the storage")
		}
		// The bcache's block device is renamed through the block device
		// update too; a virtual device's size is not changed.
		s = e.storage(sid)
		vid := s.Virtual[0].ID
		bd, err = c.BlockDevice.Update(sid, vid, &entity.BlockDeviceParams{Name: "fast1"})
		must("BlockDevice.Update virtual", err)
		if bd.Name != "fast1" || e.storage(sid).Bcaches[0].Name != "fast1" {
			t.Errorf("virtual rename: %+v / %+v", bd, e.storage(sid).Bcaches)
		}
		if code, b := e.call(http.MethodPut, n+"blockdevices/"+strconv.Itoa(vid)+"/", e.admin, url.Values{"size": {"1G"}}); code != 400 || !strings.Contains(string(b), "Size cannot be changed on this device.") {
			t.Errorf("virtual size: %d %s", code, b)
		}

		// Status: an Allocated machine is refused in MAAS's words.
		e.must(200, "POST", "machines/", e.admin, url.Values{"op": {"allocate"}, "system_id": {sid}}, nil)
		if code, b := e.call(http.MethodPut, n+"blockdevices/2/", e.admin, url.Values{"model": {"X"}}); code != http.StatusConflict || !strings.Contains(string(b), "Cannot update block device because the machine is not Ready.") {
			t.Errorf("allocated: %d %s", code, b)
		}
		if code, b := e.call(http.MethodPut, n+"bcache/"+strconv.Itoa(bc.ID)+"/", e.admin, url.Values{"name": {"x"}}); code != http.StatusConflict || !strings.Contains(string(b), "Cannot update Bcache because the machine is not Ready.") {
			t.Errorf("allocated bcache: %d %s", code, b)
		}
	})
}

// blankForGomaas makes a Ready machine with disks sda, sdb (20 GiB) and
// sdc (8 GiB SSD) and the blank layout, and a gomaasclient client with a
// check that fails the test on an error.
func (e *env) blankForGomaas(host, mac string) (string, *gmc.Client, func(string, error)) {
	t := e.t
	t.Helper()
	sid := e.readyWith(host, mac, storageInventory(mac, "uefi", disk("sda", "A", 20*gib, false), disk("sdb", "B", 20*gib, false), disk("sdc", "C", 8*gib, true)))
	e.must(200, "POST", "machines/"+sid+"/", e.admin, url.Values{"op": {"set_storage_layout"}, "storage_layout": {"blank"}}, nil)
	c, err := gmc.GetClient(strings.TrimSuffix(e.base, "/"), e.admin, "2.0")
	if err != nil {
		t.Fatal(err)
	}
	return sid, c, func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
}

// TestBlockDeviceUpdateDeployed: on a Deployed machine a disk's name,
// model, serial and id_path change (a replaced disk) and size does not;
// a virtual device is refused.
func TestBlockDeviceUpdateDeployed(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		mac := "52:54:00:5a:07:02"
		sid := e.readyWith("upd2", mac, storageInventory(mac, "uefi", disk("sda", "A", 20*gib, false)))
		e.defaultImage()
		e.must(200, "POST", "machines/", e.admin, url.Values{"op": {"allocate"}, "system_id": {sid}}, nil)
		e.must(200, "POST", "machines/"+sid+"/?op=deploy", e.admin, nil, nil)
		if _, _, err := e.srv.Service.Act(context.Background(), machine.SystemActor, sid, machine.Input{Action: machine.Succeed}); err != nil {
			t.Fatal(err)
		}
		e.waitStatus(sid, "Deployed")
		n := "nodes/" + sid + "/blockdevices/1/"
		var bd struct {
			Name, Serial string
			Size         int64
			IDPath       string `json:"id_path"`
		}
		e.must(200, http.MethodPut, n, e.admin, url.Values{"serial": {"REPLACED"}, "id_path": {"/dev/disk/by-id/wwn-0x5000"}, "size": {"1G"}}, &bd)
		if bd.Serial != "REPLACED" || bd.IDPath != "/dev/disk/by-id/wwn-0x5000" || bd.Size != 20*gib {
			t.Errorf("deployed update: %+v", bd)
		}
	})
}

// TestLogicalVolumeResize: a logical volume's size changes through the
// block device update, as MAAS's virtual block device form allows:
// rounded down to whole extents, within its group's free space; past it
// is refused in MAAS's words with nothing stored.
func TestLogicalVolumeResize(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		sid, _, _ := e.blankForGomaas("lvresize", "52:54:00:1e:00:01")
		e.must(200, "POST", "machines/"+sid+"/", e.admin, url.Values{"op": {"set_storage_layout"}, "storage_layout": {"lvm"}}, nil)
		lv := func() (int, int64) {
			var bds []struct {
				ID   int    `json:"id"`
				Name string `json:"name"`
				Size int64  `json:"size"`
			}
			e.must(200, "GET", "nodes/"+sid+"/blockdevices/", e.admin, nil, &bds)
			for _, b := range bds {
				if b.Name == "vgroot-lvroot" {
					return b.ID, b.Size
				}
			}
			t.Fatalf("no vgroot-lvroot: %+v", bds)
			return 0, 0
		}
		id, full := lv()
		path := "nodes/" + sid + "/blockdevices/" + strconv.Itoa(id) + "/"
		e.must(200, "PUT", path, e.admin, url.Values{"size": {"4294967297"}}, nil)
		if _, got := lv(); got != 4<<30 {
			t.Fatalf("after the shrink the volume is %d bytes, want %d (rounded down to extents)", got, int64(4<<30))
		}
		before := e.rawStorage(sid)
		if code, b := e.call("PUT", path, e.admin, url.Values{"size": {strconv.FormatInt(full+8<<20, 10)}}); code != 400 ||
			!strings.Contains(string(b), "There is not enough free space") || !strings.Contains(string(b), "on volume group vgroot.") {
			t.Fatalf("growing past the group: %d %s", code, b)
		}
		if after := e.rawStorage(sid); after != before {
			t.Fatalf("a refused resize changed the storage")
		}
		e.must(200, "PUT", path, e.admin, url.Values{"size": {strconv.FormatInt(full, 10)}}, nil)
		if _, got := lv(); got != full {
			t.Fatalf("grown back to %d, want %d", got, full)
		}
	})
}
