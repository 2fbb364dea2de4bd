package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// TestStorageRefusals performs the bad edits over HTTP: each is answered
// in MAAS's words and leaves the stored configuration as it was.
func TestStorageRefusals(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		mac := "52:54:00:5a:03:01"
		sid := e.readyWith("bad1", mac, storageInventory(mac, "uefi", disk("sda", "A", 20*gib, false), disk("sdb", "B", 20*gib, false)))
		n := "nodes/" + sid + "/"
		// flat: sda holds the ESP (partition 1) and root; sdb is free.
		s := e.storage(sid)
		root := s.Physical[0].Partitions[1]
		before := e.rawStorage(sid)
		for _, tc := range []struct {
			name, method, path, key string
			f                       url.Values
			code                    int
			want                    string
		}{
			{"a RAID of one disk", "POST", n + "raids/", e.admin, url.Values{"level": {"raid-1"}, "block_devices": {"2"}}, 400,
				`{"__all__":["RAID level 1 must have at least 2 raid devices and any number of spares."]}`},
			{"a RAID over a disk in use", "POST", n + "raids/", e.admin, url.Values{"level": {"raid-1"}, "block_devices": {"1", "2"}}, 400,
				`{"block_devices":["sda is already in use as a partition table."]}`},
			{"an unknown RAID level", "POST", n + "raids/", e.admin, url.Values{"level": {"raid-7"}, "block_devices": {"2"}}, 400,
				`"level":["Select a valid choice. raid-7 is not one of the available choices."]`},
			{"formatting a partitioned disk", "POST", n + "blockdevices/1/", e.admin, url.Values{"op": {"format"}, "fstype": {"ext4"}}, 400,
				`{"__all__":["Cannot format block device with a partition table."]}`},
			{"formatting with a filesystem Anvil cannot make", "POST", n + "blockdevices/2/", e.admin, url.Values{"op": {"format"}, "fstype": {"zfs"}}, 400,
				`{"fstype":["Select a valid choice. zfs is not one of the available choices."]}`},
			{"unformatting a mounted root", "POST", root.URI[len("/MAAS/api/2.0/"):], e.admin, url.Values{"op": {"unformat"}}, 400,
				"Filesystem is mounted and cannot be unformatted. Unmount the filesystem before unformatting the partition."},
			{"a partition past the disk", "POST", n + "blockdevices/2/partitions/", e.admin, url.Values{"size": {"30G"}}, 400,
				`{"size":["Partition size is too large. Maximum size is`},
			{"a partition on a full disk", "POST", n + "blockdevices/1/partitions/", e.admin, url.Values{"size": {"1G"}}, 400,
				`{"size":["There is no space left on sda for a partition."]}`},
			{"mounting an unformatted disk", "POST", n + "blockdevices/2/", e.admin, url.Values{"op": {"mount"}, "mount_point": {"/srv"}}, 400,
				`{"__all__":["Cannot mount an unformatted partition or block device."]}`},
			{"unmounting an unformatted disk", "POST", n + "blockdevices/2/", e.admin, url.Values{"op": {"unmount"}}, 400, "Block device is not formatted."},
			{"a bad volume group name", "POST", n + "volume-groups/", e.admin, url.Values{"name": {"-bad"}, "block_devices": {"2"}}, 400,
				`{"name":["\"-bad\" is not a valid name`},
			{"a volume group of nothing", "POST", n + "volume-groups/", e.admin, url.Values{"name": {"vg0"}}, 400,
				`{"__all__":["At least one valid block device or partition is required."]}`},
			{"a disk larger than any", "POST", n + "blockdevices/", e.admin, url.Values{"name": {"sdz"}, "size": {"9000000000000000000"}, "block_size": {"512"}, "model": {"m"}, "serial": {"s"}}, 400,
				`{"size":["Ensure this value is less than or equal to 4503599627370496."]}`},
			{"a block size no disk has", "POST", n + "blockdevices/", e.admin, url.Values{"name": {"sdz"}, "size": {"8000000000"}, "block_size": {"1073741824"}, "model": {"m"}, "serial": {"s"}}, 400,
				`{"block_size":["Enter a power of two from 512 to 65536."]}`},
			{"an unknown partition", "DELETE", n + "blockdevices/1/partition/999", e.admin, nil, 404, "No Partition matches the given query."},
			{"an unknown block device", "GET", n + "blockdevices/99/", e.admin, nil, 404, "No BlockDevice matches the given query."},
			{"an unknown machine", "GET", "nodes/nosuch/blockdevices/", e.admin, nil, 404, "No Machine matches the given query."},
			{"a user on a Ready machine", "POST", n + "raids/", e.user, url.Values{"level": {"raid-1"}, "block_devices": {"2"}}, 403,
				"Cannot create RAID because you don't have the permissions on a Ready machine."},
		} {
			code, body := e.call(tc.method, tc.path, tc.key, tc.f)
			if code != tc.code || !strings.Contains(string(body), tc.want) {
				t.Errorf("%s: %d %s; want %d %q", tc.name, code, body, tc.code, tc.want)
			}
		}
		if after := e.rawStorage(sid); after != before {
			t.Fatalf("a refused edit changed the storage:\n%s\nthen\n%s", before, after)
		}

		// Edits in the wrong status: Allocated allows formatting and
		// mounting (MAAS's rule), not partitioning; Deployed allows none.
		e.must(http.StatusOK, http.MethodPost, "machines/", e.user, url.Values{"op": {"allocate"}, "system_id": {sid}}, nil)
		if code, body := e.call("POST", n+"blockdevices/2/partitions/", e.user, nil); code != 409 || string(body) != "Cannot create partition because the node is not Ready.\n" {
			t.Errorf("partition on Allocated: %d %q", code, body)
		}
		e.must(200, "POST", n+"blockdevices/2/", e.user, url.Values{"op": {"format"}, "fstype": {"xfs"}}, nil)
		e.must(200, "POST", n+"blockdevices/2/", e.user, url.Values{"op": {"mount"}, "mount_point": {"/srv"}}, nil)
		if s := e.storage(sid); s.Physical[1].Filesystem == nil || *s.Physical[1].Filesystem.MountPoint != "/srv" {
			t.Fatalf("format and mount on Allocated: %+v", s.Physical[1])
		}
		if code, body := e.call("POST", n+"blockdevices/2/", "", url.Values{"op": {"unmount"}}); code != 401 {
			t.Errorf("anonymous: %d %s", code, body)
		}
		e.must(200, "POST", "machines/"+sid+"/", e.user, url.Values{"op": {"release"}}, nil)
		e.waitStatus(sid, "Ready")
		e.must(200, "POST", "machines/"+sid+"/", e.admin, url.Values{"op": {"mark_broken"}}, nil)
		before = e.rawStorage(sid)
		for path, f := range map[string]url.Values{
			n + "blockdevices/2/":        {"op": {"unmount"}},
			n + "raids/":                 {"level": {"raid-1"}},
			"machines/" + sid + "/?op=x": nil,
		} {
			if f == nil {
				continue
			}
			code, body := e.call("POST", path, e.admin, f)
			if code != 409 || !strings.Contains(string(body), "is not Ready") {
				t.Errorf("%s on Broken: %d %s", path, code, body)
			}
		}
		if after := e.rawStorage(sid); after != before {
			t.Fatal("an edit of a Broken machine was stored")
		}
	})
}

// TestDeployRefusesUnbootableStorage deploys a root tarball onto layouts
// that cannot boot: 400 {"storage": [...]} naming why, the machine stays
// Allocated with nothing of the deploy stored; a disk image deploys, as
// it carries its own layout.
func TestDeployRefusesUnbootableStorage(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		mac := "52:54:00:5a:04:01"
		sid := e.readyWith("nb1", mac, storageInventory(mac, "uefi", disk("sda", "A", 20*gib, false)))
		e.uploadTarball("custom/deb")
		e.uploadImage("custom/raw", "amd64/generic")
		// UEFI without an ESP: unmount /boot/efi.
		s := e.storage(sid)
		esp := s.Physical[0].Partitions[0]
		e.must(200, "POST", esp.URI[len("/MAAS/api/2.0/"):], e.admin, url.Values{"op": {"unmount"}}, nil)
		e.must(200, "POST", "machines/", e.user, url.Values{"op": {"allocate"}, "system_id": {sid}}, nil)
		before := e.rawStorage(sid)
		code, body := e.call("POST", "machines/"+sid+"/", e.user, url.Values{"op": {"deploy"}, "osystem": {"custom"}, "distro_series": {"deb"}})
		if code != 400 || !strings.Contains(string(body), `{"storage":["the machine boots UEFI and there is no EFI system partition`) {
			t.Fatalf("deploy without an ESP: %d %s", code, body)
		}
		if m := e.machine(sid); m.StatusName != "Allocated" || e.rawStorage(sid) != before {
			t.Fatalf("a refused deploy changed the machine: %s", m.StatusName)
		}
		// Blank: no root at all.
		e.must(200, "POST", "machines/"+sid+"/", e.user, url.Values{"op": {"release"}}, nil)
		e.waitStatus(sid, "Ready")
		e.must(200, "POST", "machines/"+sid+"/", e.admin, url.Values{"op": {"set_storage_layout"}, "storage_layout": {"blank"}}, nil)
		e.must(200, "POST", "machines/", e.user, url.Values{"op": {"allocate"}, "system_id": {sid}}, nil)
		code, body = e.call("POST", "machines/"+sid+"/", e.user, url.Values{"op": {"deploy"}, "osystem": {"custom"}, "distro_series": {"deb"}})
		if code != 400 || !strings.Contains(string(body), "no filesystem is mounted at /") {
			t.Fatalf("deploy of blank: %d %s", code, body)
		}
		// A disk image needs no layout.
		e.must(200, "POST", "machines/"+sid+"/", e.user, url.Values{"op": {"deploy"}, "osystem": {"custom"}, "distro_series": {"raw"}}, nil)
		m, err := e.srv.Store.GetMachine(t.Context(), sid)
		if err != nil {
			t.Fatal(err)
		}
		task, err := e.srv.Service.Task(t.Context(), m, "http://127.0.0.1/images/")
		if err != nil || task.Storage != nil || task.Image == nil {
			t.Fatalf("raw image task: %+v %v", task, err)
		}
	})
}

// TestStorageUnknownIDs calls every action of the storage resources that
// name an object, on a machine that exists, with ids that name nothing:
// MAAS's 404 naming the model looked up (the block device before its
// partition), as text/plain.
func TestStorageUnknownIDs(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		mac := "52:54:00:5a:07:01"
		sid := e.readyWith("ids1", mac, storageInventory(mac, "bios", disk("sda", "A", 20*gib, false)))
		models := map[string]string{
			"BlockDeviceHandler": "BlockDevice", "PartitionsHandler": "BlockDevice", "PartitionHandler": "BlockDevice",
			"VolumeGroupHandler": "VolumeGroup", "RaidHandler": "RAID", "BcacheHandler": "Bcache", "BcacheCacheSetHandler": "CacheSet",
		}
		n := 0
		for _, res := range e.describe().Resources {
			h := res.Auth
			if h == nil || models[h.Name] == "" {
				continue
			}
			path := strings.NewReplacer("{system_id}", sid, "{device_id}", "987654", "{id}", "987654").Replace(strings.TrimPrefix(h.Path, "/MAAS/api/2.0/"))
			for _, a := range h.Actions {
				p := path
				if a.Op != nil {
					p += "?op=" + *a.Op
				}
				var body []byte
				if a.Method == http.MethodPost || a.Method == http.MethodPut {
					body = cliBody(cliPart{name: "name", value: "x"})
				}
				got := e.cli(a.Method, p, e.admin, body)
				want := "No " + models[h.Name] + " matches the given query."
				if got.code != http.StatusNotFound || string(got.body) != want || got.header.Get("Content-Type") != "text/plain" {
					t.Errorf("%s %s: %d %q, want 404 %q", a.Method, p, got.code, got.body, want)
				}
				n++
			}
		}
		if n < 25 {
			t.Fatalf("only %d storage actions tried", n)
		}
		// A partition id that is not on the block device named.
		if got := e.cli("GET", "nodes/"+sid+"/blockdevices/1/partition/987654", e.admin, nil); got.code != 404 || string(got.body) != "No Partition matches the given query." {
			t.Errorf("unknown partition: %d %q", got.code, got.body)
		}
	})
}

// TestStorageConcurrentEdits sends edits of one machine at once: each is
// a read, an edit and a write under the machine's version, so none is
// lost and no id is given twice.
func TestStorageConcurrentEdits(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		mac := "52:54:00:5a:08:01"
		sid := e.readyWith("cc1", mac, storageInventory(mac, "bios", disk("sda", "A", 20*gib, false), disk("sdb", "B", 20*gib, false)))
		const n = 8
		var wg sync.WaitGroup
		codes := make([]int, n)
		for i := range n {
			wg.Go(func() {
				codes[i], _ = e.call("POST", "nodes/"+sid+"/blockdevices/2/partitions/", e.admin, url.Values{"size": {"1G"}})
			})
		}
		wg.Wait()
		for i, c := range codes {
			if c != 200 {
				t.Fatalf("edit %d: %d", i, c)
			}
		}
		parts := e.storage(sid).Physical[1].Partitions
		ids := map[int]bool{}
		for _, p := range parts {
			ids[p.ID] = true
		}
		if len(parts) != n || len(ids) != n {
			t.Fatalf("%d concurrent partitions: %d stored, %d ids", n, len(parts), len(ids))
		}
	})
}
