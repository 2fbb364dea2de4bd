package api_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/machine"
)

// The storage API over real HTTP: layouts after commissioning, the ops,
// set_storage_layout, a custom RAID 1 + LVM, the refusals (nothing
// stored), and a deploy's validation and task.

type apiFS struct {
	FSType     string  `json:"fstype"`
	UUID       *string `json:"uuid"`
	MountPoint *string `json:"mount_point"`
}

type apiPart struct {
	ID         int    `json:"id"`
	Size       int64  `json:"size"`
	Filesystem *apiFS `json:"filesystem"`
	UsedFor    string `json:"used_for"`
	DeviceID   int    `json:"device_id"`
	URI        string `json:"resource_uri"`
}

type apiBlock struct {
	ID         int       `json:"id"`
	Name       string    `json:"name"`
	Type       string    `json:"type"`
	Size       int64     `json:"size"`
	UsedFor    string    `json:"used_for"`
	Available  int64     `json:"available_size"`
	Table      *string   `json:"partition_table_type"`
	Partitions []apiPart `json:"partitions"`
	Filesystem *apiFS    `json:"filesystem"`
	Tags       []string  `json:"tags"`
}

type apiStorage struct {
	Status    string     `json:"status_name"`
	Storage   float64    `json:"storage"`
	BootDisk  *apiBlock  `json:"boot_disk"`
	Blocks    []apiBlock `json:"blockdevice_set"`
	Physical  []apiBlock `json:"physicalblockdevice_set"`
	Virtual   []apiBlock `json:"virtualblockdevice_set"`
	VGs       []apiVG    `json:"volume_groups"`
	RAIDs     []apiRAID  `json:"raids"`
	CacheSets []struct {
		ID   int    `json:"id"`
		Name string `json:"name"`
	} `json:"cache_sets"`
	Bcaches []struct {
		Name      string `json:"name"`
		CacheMode string `json:"cache_mode"`
	} `json:"bcaches"`
	Special []apiFS `json:"special_filesystems"`
}

type apiVG struct {
	ID        int        `json:"id"`
	Name      string     `json:"name"`
	Size      int64      `json:"size"`
	Available int64      `json:"available_size"`
	LVs       []apiBlock `json:"logical_volumes"`
}

type apiRAID struct {
	ID      int      `json:"id"`
	Name    string   `json:"name"`
	Level   string   `json:"level"`
	Devices []any    `json:"devices"`
	Virtual apiBlock `json:"virtual_device"`
}

const gib = int64(1) << 30

func disk(name, serial string, size int64, ssd bool) machine.Disk {
	return machine.Disk{Name: name, Model: "QEMU HARDDISK", Serial: serial, Size: size, BlockSize: 512, Rotational: !ssd}
}

func storageInventory(mac, fw string, disks ...machine.Disk) *machine.Inventory {
	inv := testInventory(mac)
	inv.Firmware, inv.Disks = fw, disks
	return inv
}

// commission runs a machine's commissioning through the metadata API,
// reporting inv; boot numbers each boot (a rack's sighting is one use).
func (e *env) commission(sid, mac string, boot int, inv *machine.Inventory) {
	e.t.Helper()
	ctx := e.t.Context()
	e.must(http.StatusOK, http.MethodPost, "machines/"+sid+"/", e.admin, url.Values{"op": {"commission"}}, nil)
	e.waitStatus(sid, "Commissioning")
	hr := agentapi.HelloRequest{Identity: ident("", mac), Purpose: "ephemeral", Enrol: e.enrol(sid)}
	hr.Seen = e.seen(mac, boot)
	r, err := e.agent("").Hello(ctx, hr)
	if err != nil || r.Token == "" {
		e.t.Fatalf("hello: %+v %v", r, err)
	}
	if err := e.agent(r.Token).Signal(ctx, agentapi.StatusOK, "", inventoryFile(e.t, inv)); err != nil {
		e.t.Fatal(err)
	}
	e.waitStatus(sid, "Ready")
}

func (e *env) storage(sid string) apiStorage {
	e.t.Helper()
	var s apiStorage
	e.must(http.StatusOK, http.MethodGet, "machines/"+sid+"/", e.admin, nil, &s)
	return s
}

// rawMachine is the machine's storage fields as answered, to compare
// before and after a refused edit.
func (e *env) rawStorage(sid string) string {
	e.t.Helper()
	var m map[string]json.RawMessage
	e.must(http.StatusOK, http.MethodGet, "machines/"+sid+"/", e.admin, nil, &m)
	var b strings.Builder
	for _, k := range []string{"blockdevice_set", "volume_groups", "raids", "cache_sets", "bcaches", "boot_disk", "special_filesystems"} {
		b.WriteString(k + "=" + string(m[k]) + "\n")
	}
	return b.String()
}

func (e *env) hasEventText(sid, text string) bool {
	e.t.Helper()
	var evs struct {
		Events []struct {
			Description string `json:"description"`
		} `json:"events"`
	}
	e.must(http.StatusOK, http.MethodGet, "events/", e.admin, url.Values{"op": {"query"}, "id": {sid}, "limit": {"100"}}, &evs)
	for _, ev := range evs.Events {
		if strings.Contains(ev.Description, text) {
			return true
		}
	}
	return false
}

func TestStorageLayoutAfterCommissioning(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		mac := "52:54:00:5a:00:01"
		sid := e.addMachine("st1", mac, nil).SystemID
		inv := storageInventory(mac, "uefi", disk("sda", "S1", 20*gib, false), disk("sdb", "S2", 10*gib, true))
		e.commission(sid, mac, 1, inv)
		s := e.storage(sid)
		if len(s.Physical) != 2 || s.BootDisk == nil || s.BootDisk.ID != 1 || s.Physical[1].ID != 2 || s.Storage != float64(30*gib)/1e6 {
			t.Fatalf("after commissioning: %+v", s)
		}
		sda := s.Physical[0]
		if sda.Table == nil || *sda.Table != "GPT" || len(sda.Partitions) != 2 || sda.UsedFor != "GPT partitioned with 2 partitions" ||
			sda.Partitions[0].Filesystem.FSType != "fat32" || *sda.Partitions[1].Filesystem.MountPoint != "/" ||
			sda.Partitions[0].Size != 512<<20 || s.Physical[1].UsedFor != "Unused" || s.Physical[1].Tags[0] != "ssd" {
			t.Fatalf("flat on UEFI: %+v", sda)
		}
		if !e.hasEventText(sid, "the flat storage layout was applied") {
			t.Fatal("no event for the layout")
		}
		// Recommissioning with the same disks keeps the layout, whatever
		// the setting says now.
		e.must(http.StatusOK, http.MethodPost, "maas/", e.admin, url.Values{"op": {"set_config"}, "name": {"default_storage_layout"}, "value": {"lvm"}}, nil)
		e.commission(sid, mac, 2, inv)
		if got := e.storage(sid); len(got.VGs) != 0 || got.Physical[0].Partitions[1].ID != sda.Partitions[1].ID {
			t.Fatalf("same disks, layout not kept: %+v", got)
		}
		// New disks reset it to the setting's layout, with an event.
		inv.Disks[1].Serial = "S3"
		e.commission(sid, mac, 3, inv)
		got := e.storage(sid)
		if len(got.VGs) != 1 || got.VGs[0].Name != "vgroot" || len(got.VGs[0].LVs) != 1 || got.VGs[0].LVs[0].Name != "vgroot-lvroot" {
			t.Fatalf("changed disks: %+v", got)
		}
		if !e.hasEventText(sid, "The disks changed, so the storage configuration was reset; the lvm storage layout was applied") {
			t.Fatal("no event for the reset")
		}
		// A layout that does not fit leaves none, and says why.
		mac2 := "52:54:00:5a:00:02"
		small := e.addMachine("st2", mac2, nil).SystemID
		e.commission(small, mac2, 4, storageInventory(mac2, "bios", disk("vda", "T1", 2*gib, false)))
		if s := e.storage(small); len(s.Physical) != 1 || s.Physical[0].UsedFor != "Unused" || s.Physical[0].Table != nil {
			t.Fatalf("a 2 GiB disk was laid out: %+v", s)
		}
		if !e.hasEventText(small, "the lvm storage layout was not applied: ") {
			t.Fatal("no event saying the layout did not fit")
		}
	})
}

// readyWith puts a commissioned machine in Ready with inv without the
// metadata round trip (for the tests about editing).
func (e *env) readyWith(host, mac string, inv *machine.Inventory) string {
	e.t.Helper()
	sid := e.addMachine(host, mac, nil).SystemID
	e.commission(sid, mac, 1, inv)
	return sid
}

func TestSetStorageLayout(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		mac := "52:54:00:5a:01:01"
		sid := e.readyWith("sl1", mac, storageInventory(mac, "bios", disk("sda", "A", 40*gib, false), disk("sdb", "B", 8*gib, true)))
		set := func(want int, key string, f url.Values) []byte {
			t.Helper()
			f.Set("op", "set_storage_layout")
			code, body := e.call(http.MethodPost, "machines/"+sid+"/", key, f)
			if code != want {
				t.Fatalf("set_storage_layout %v: %d %s", f, code, body)
			}
			return body
		}
		set(200, e.admin, url.Values{"storage_layout": {"lvm"}, "vg_name": {"vg0"}, "lv_size": {"10G"}})
		s := e.storage(sid)
		if len(s.VGs) != 1 || s.VGs[0].Name != "vg0" || s.VGs[0].LVs[0].Size != int64(10e9)/(4<<20)*(4<<20) || s.VGs[0].Available <= 0 {
			t.Fatalf("lvm: %+v", s.VGs)
		}
		// BIOS on GPT: bios_grub is hidden as MAAS hides it; root is 1.
		if p := s.Physical[0].Partitions; len(p) != 1 || p[0].UsedFor != "LVM volume for vg0" {
			t.Fatalf("lvm partitions: %+v", p)
		}
		set(200, e.admin, url.Values{"storage_layout": {"bcache"}, "cache_mode": {"writeback"}})
		s = e.storage(sid)
		if len(s.Bcaches) != 1 || s.Bcaches[0].CacheMode != "writeback" || len(s.CacheSets) != 1 || len(s.Physical[0].Partitions) != 2 {
			t.Fatalf("bcache: %+v", s)
		}
		set(200, e.admin, url.Values{"storage_layout": {"flat"}, "boot_size": {"1G"}})
		s = e.storage(sid)
		if len(s.Bcaches) != 0 || len(s.Physical[0].Partitions) != 2 || *s.Physical[0].Partitions[0].Filesystem.MountPoint != "/boot" {
			t.Fatalf("flat: %+v", s.Physical[0])
		}
		set(200, e.admin, url.Values{"storage_layout": {"blank"}})
		s = e.storage(sid)
		if s.Physical[0].Table != nil || s.Physical[0].UsedFor != "Unused" || s.Physical[0].ID != 1 {
			t.Fatalf("blank: %+v", s.Physical[0])
		}
		// restore_storage_configuration lays out the default (flat) afresh.
		e.must(200, "POST", "machines/"+sid+"/", e.admin, url.Values{"op": {"restore_storage_configuration"}}, nil)
		if s := e.storage(sid); s.Physical[0].ID != 1 || len(s.Physical[0].Partitions) != 1 || *s.Physical[0].Partitions[0].Filesystem.MountPoint != "/" {
			t.Fatalf("restored: %+v", s.Physical[0])
		}
		set(200, e.admin, url.Values{"storage_layout": {"blank"}})
		// Refusals in MAAS's words, and nothing stored.
		before := e.rawStorage(sid)
		for _, tc := range []struct {
			key  string
			f    url.Values
			code int
			want string
		}{
			{e.admin, url.Values{"storage_layout": {"zfs"}}, 400, `{"storage_layout":["Select a valid choice. zfs is not one of the available choices`},
			{e.admin, url.Values{}, 400, `{"storage_layout":["This field is required."]}`},
			{e.admin, url.Values{"storage_layout": {"lvm"}, "lv_size": {"100G"}}, 400, "Failed to configure storage layout 'lvm': lv_size: Size is too large."},
			{e.admin, url.Values{"storage_layout": {"flat"}, "root_size": {"41G"}, "boot_size": {"2G"}}, 400, "Failed to configure storage layout 'flat': "},
			{e.admin, url.Values{"storage_layout": {"bcache"}, "cache_device": {"1"}}, 400, `'1' is not a valid cache_device.  It should be one of: '2'.`},
			{e.user, url.Values{"storage_layout": {"flat"}}, 403, "You do not have permission to change the storage layout of this machine."},
		} {
			body := string(set(tc.code, tc.key, tc.f))
			if !strings.Contains(body, tc.want) {
				t.Errorf("%v: %s, want %q", tc.f, body, tc.want)
			}
		}
		e.must(http.StatusOK, http.MethodPost, "machines/", e.user, url.Values{"op": {"allocate"}, "system_id": {sid}}, nil)
		if body := set(409, e.admin, url.Values{"storage_layout": {"flat"}}); string(body) != "Cannot change the storage layout on a machine that is not Ready.\n" {
			t.Errorf("Allocated: %q", body)
		}
		if after := e.rawStorage(sid); after != before {
			t.Fatalf("a refused layout changed the storage:\n%s\nthen\n%s", before, after)
		}
	})
}

// TestCustomRAIDLVMByOps builds the layout servers run through the ops,
// in the maas CLI's wire format: ESP on the first disk, RAID 1 for
// /boot, LVM on RAID 1 for / and swap; then deploys a root tarball and
// reads the task the environment would get.
func TestCustomRAIDLVMByOps(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		mac := "52:54:00:5a:02:01"
		sid := e.readyWith("raid1", mac, storageInventory(mac, "uefi", disk("sda", "A", 20*gib, false), disk("sdb", "B", 20*gib, false)))
		n := "nodes/" + sid + "/"
		cli := func(path string, parts ...cliPart) []byte {
			t.Helper()
			return e.mustCLI(200, "POST", n+path, e.admin, cliBody(parts...)).body
		}
		op := func(v string) cliPart { return cliPart{name: "op", value: v} }
		p := func(k, v string) cliPart { return cliPart{name: k, value: v} }
		e.mustCLI(200, "POST", "machines/"+sid+"/", e.admin, cliBody(op("set_storage_layout"), p("storage_layout", "blank")))
		var part apiPart
		newPart := func(dev int, size string) apiPart {
			t.Helper()
			var parts []cliPart
			if size != "" {
				parts = append(parts, p("size", size))
			}
			if err := json.Unmarshal(cli(fmt.Sprintf("blockdevices/%d/partitions/", dev), parts...), &part); err != nil {
				t.Fatal(err)
			}
			return part
		}
		esp := newPart(1, "536870912")
		cli(strings.TrimPrefix(esp.URI, "/MAAS/api/2.0/"+n), op("format"), p("fstype", "fat32"), p("label", "efi"))
		cli(fmt.Sprintf("blockdevices/1/partition/%d", esp.ID), op("mount"), p("mount_point", "/boot/efi"))
		newPart(2, "536870912")
		b1, b2 := newPart(1, "1G"), newPart(2, "1G")
		r1, r2 := newPart(1, ""), newPart(2, "")
		var boot, root apiRAID
		if err := json.Unmarshal(cli("raids/", p("level", "raid-1"), p("partitions", strconv.Itoa(b1.ID)), p("partitions", strconv.Itoa(b2.ID))), &boot); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(cli("raids/", p("name", "md-root"), p("level", "raid-1"), p("partitions", strconv.Itoa(r1.ID)), p("partitions", strconv.Itoa(r2.ID))), &root); err != nil {
			t.Fatal(err)
		}
		if boot.Name != "md0" || boot.Level != "raid-1" || len(boot.Devices) != 2 || boot.Virtual.Size != b1.Size-128<<10 {
			t.Fatalf("RAID: %+v", boot)
		}
		cli(fmt.Sprintf("blockdevices/%d/", boot.Virtual.ID), op("format"), p("fstype", "ext4"))
		cli(fmt.Sprintf("blockdevices/%d/", boot.Virtual.ID), op("mount"), p("mount_point", "/boot"))
		var vg apiVG
		if err := json.Unmarshal(cli("volume-groups/", p("name", "vg0"), p("block_devices", strconv.Itoa(root.Virtual.ID))), &vg); err != nil {
			t.Fatal(err)
		}
		var swap, lvroot apiBlock
		_ = json.Unmarshal(cli(fmt.Sprintf("volume-group/%d/", vg.ID), op("create_logical_volume"), p("name", "swap"), p("size", "1073741824")), &swap)
		_ = json.Unmarshal(cli(fmt.Sprintf("volume-group/%d/", vg.ID), op("create_logical_volume"), p("name", "root")), &lvroot)
		if swap.Name != "vg0-swap" || swap.Size != gib || lvroot.Size <= 0 {
			t.Fatalf("logical volumes: %+v %+v", swap, lvroot)
		}
		cli(fmt.Sprintf("blockdevices/%d/", swap.ID), op("format"), p("fstype", "swap"))
		cli(fmt.Sprintf("blockdevices/%d/", swap.ID), op("mount"))
		cli(fmt.Sprintf("blockdevices/%d/", lvroot.ID), op("format"), p("fstype", "ext4"))
		cli(fmt.Sprintf("blockdevices/%d/", lvroot.ID), op("mount"), p("mount_point", "/"))
		s := e.storage(sid)
		if len(s.RAIDs) != 2 || len(s.VGs) != 1 || len(s.Virtual) != 4 || len(s.Blocks) != 6 {
			t.Fatalf("custom: %d RAIDs, %d VGs, %d virtual, %d block devices", len(s.RAIDs), len(s.VGs), len(s.Virtual), len(s.Blocks))
		}
		// Reads by id agree with the machine object.
		var one apiBlock
		e.must(200, "GET", n+fmt.Sprintf("blockdevices/%d/", lvroot.ID), e.admin, nil, &one)
		if one.Filesystem == nil || *one.Filesystem.MountPoint != "/" || one.Type != "virtual" {
			t.Fatalf("logical volume read: %+v", one)
		}

		// Deploying a root tarball validates the layout and fills the
		// task, with the filesystems' UUIDs stored.
		e.uploadTarball("custom/deb")
		e.must(200, "POST", "machines/", e.user, url.Values{"op": {"allocate"}, "system_id": {sid}}, nil)
		e.must(200, "POST", "machines/"+sid+"/", e.user, url.Values{"op": {"deploy"}, "osystem": {"custom"}, "distro_series": {"deb"}}, nil)
		m, err := e.srv.Store.GetMachine(t.Context(), sid)
		if err != nil {
			t.Fatal(err)
		}
		task, err := e.srv.Service.Task(t.Context(), m, "http://127.0.0.1/images/")
		if err != nil || task.Storage == nil || len(task.Storage.RAIDs) != 2 || task.Image.FileType != "tgz" {
			t.Fatalf("task: %+v %v", task, err)
		}
		for _, f := range task.Storage.Filesystems {
			if f.UUID == "" {
				t.Fatalf("filesystem without a UUID in the task: %+v", f)
			}
		}
		e.must(200, "GET", n+fmt.Sprintf("blockdevices/%d/", lvroot.ID), e.admin, nil, &one)
		if one.Filesystem.UUID == nil || *one.Filesystem.UUID == "" {
			t.Fatalf("the API does not show the UUID the task has: %+v", one.Filesystem)
		}
	})
}

// uploadTarball uploads a (token) root tarball under name.
func (e *env) uploadTarball(name string) {
	e.t.Helper()
	img := []byte("\x1f\x8b" + strings.Repeat("root tarball ", 100))
	code, body := e.upload(e.admin, url.Values{"name": {name}, "architecture": {"amd64/generic"}, "filetype": {"tgz"},
		"sha256": {fmt.Sprintf("%x", sha256.Sum256(img))}, "size": {itoa(int64(len(img)))}}, img)
	if code != http.StatusCreated {
		e.t.Fatalf("upload %s: %d %s", name, code, body)
	}
}

// TestAllocateByStorage allocates with MAAS's storage= constraint and
// reads constraints_by_type.
func TestAllocateByStorage(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		small, big := "52:54:00:5a:06:01", "52:54:00:5a:06:02"
		e.readyWith("small", small, storageInventory(small, "bios", disk("sda", "A", 20*gib, false)))
		sid := e.readyWith("big", big, storageInventory(big, "bios", disk("sda", "B", 100*gib, true), disk("sdb", "C", 500*gib, false)))
		var got struct {
			SystemID    string `json:"system_id"`
			Constraints struct {
				Storage map[string][]any `json:"storage"`
			} `json:"constraints_by_type"`
		}
		e.must(200, "POST", "machines/", e.user, url.Values{"op": {"allocate"}, "storage": {"root:50(ssd),data:400(rotary)"}, "dry_run": {"true"}}, &got)
		if got.SystemID != sid || len(got.Constraints.Storage["root"]) != 1 || got.Constraints.Storage["root"][0] != float64(1) || got.Constraints.Storage["data"][0] != float64(2) {
			t.Fatalf("dry run: %+v", got)
		}
		e.must(200, "POST", "machines/", e.user, url.Values{"op": {"allocate"}, "storage": {"root:50,data:400"}}, &got)
		if got.SystemID != sid || got.Constraints.Storage["data"][0] != float64(2) {
			t.Fatalf("allocated: %+v", got)
		}
		if code, body := e.call("POST", "machines/", e.user, url.Values{"op": {"allocate"}, "storage": {"root:10(nvme)"}}); code != 409 || !strings.Contains(string(body), "No available machine matches constraints") {
			t.Fatalf("no match: %d %s", code, body)
		}
		if code, body := e.call("POST", "machines/", e.user, url.Values{"op": {"allocate"}, "storage": {"root:ten"}}); code != 400 || !strings.Contains(string(body), `{"storage":["malformed storage constraint`) {
			t.Fatalf("bad constraint: %d %s", code, body)
		}
	})
}
