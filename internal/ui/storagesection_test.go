package ui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
)

// The storage section shows the layout the API applied and the custom
// edits made through the same paths its forms use.
func TestMachineStorageSection(t *testing.T) { eachDB(t, testMachineStorageSection, nil) }

func testMachineStorageSection(t *testing.T, s *site) {
	c, csrf, id := s.asAda("disk-1", 2)
	page := s.page(c, "/MAAS/machine/"+id)
	mustContain(t, page, `id="storage-devices"`, "sda", "40.0 GiB", "unused", `id="apply-layout"`, `data-api="POST nodes/`+id+`/blockdevices/{disk}/partitions/"`)

	// A layout that cannot be is refused as the API refuses it.
	body := s.mustDo(c, "POST", "/MAAS/api/2.0/machines/"+id+"/?op=set_storage_layout", url.Values{"storage_layout": {"zfs"}}, csrf, http.StatusBadRequest)
	mustContain(t, body, "zfs")
	s.mustDo(c, "POST", "/MAAS/api/2.0/machines/"+id+"/?op=set_storage_layout", url.Values{"storage_layout": {"lvm"}}, csrf, http.StatusOK)
	page = s.page(c, "/MAAS/machine/"+id)
	mustContain(t, page, "Layout: <strong>lvm</strong>", `id="storage-vgs"`, "vgroot", "lvroot", "ext4 at /", `id="create-lv"`)

	// Custom edits on the second disk: a partition, formatted and
	// mounted; then a partition deleted.
	var sdb int
	for _, d := range s.blockDevices(c, id) {
		if d.Name == "sdb" {
			sdb = d.ID
		}
	}
	s.mustDo(c, "POST", fmt.Sprintf("/MAAS/api/2.0/nodes/%s/blockdevices/%d/partitions/", id, sdb), url.Values{"size": {"5G"}}, csrf, http.StatusOK)
	s.mustDo(c, "POST", fmt.Sprintf("/MAAS/api/2.0/nodes/%s/blockdevices/%d/partitions/", id, sdb), url.Values{"size": {"5G"}}, csrf, http.StatusOK)
	parts := s.partitions(c, id, sdb)
	if len(parts) != 2 {
		t.Fatalf("partitions %v", parts)
	}
	s.mustDo(c, "POST", fmt.Sprintf("/MAAS/api/2.0/nodes/%s/blockdevices/%d/partition/%d?op=format", id, sdb, parts[0]), url.Values{"fstype": {"xfs"}}, csrf, http.StatusOK)
	s.mustDo(c, "POST", fmt.Sprintf("/MAAS/api/2.0/nodes/%s/blockdevices/%d/partition/%d?op=mount", id, sdb, parts[0]), url.Values{"mount_point": {"/srv"}}, csrf, http.StatusOK)
	// Mounting over / again is refused in the API's words.
	body = s.mustDo(c, "POST", fmt.Sprintf("/MAAS/api/2.0/nodes/%s/blockdevices/%d/partition/%d?op=format", id, sdb, parts[1]), url.Values{"fstype": {"nofs"}}, csrf, http.StatusBadRequest)
	mustContain(t, body, "nofs")
	s.mustDo(c, "DELETE", fmt.Sprintf("/MAAS/api/2.0/nodes/%s/blockdevices/%d/partition/%d", id, sdb, parts[1]), nil, csrf, http.StatusNoContent)
	page = s.page(c, "/MAAS/machine/"+id)
	mustContain(t, page, "sdb-part1", "xfs at /srv", fmt.Sprintf(`data-api="DELETE nodes/%s/blockdevices/%d/partition/%d"`, id, sdb, parts[0]),
		fmt.Sprintf(`<option value="blockdevices/%d/partition/%d">sdb-part1</option>`, sdb, parts[0]))
	mustLack(t, page, "sdb-part2")

	// A RAID and a volume group offer what they can be built on.
	mustContain(t, page, `id="create-raid"`, `name="partitions" value="`+fmt.Sprint(parts[0])+`"`)
	s.mustDo(c, "POST", fmt.Sprintf("/MAAS/api/2.0/nodes/%s/blockdevices/%d/partitions/", id, sdb), url.Values{"size": {"8G"}}, csrf, http.StatusOK)
	parts = s.partitions(c, id, sdb)
	free := fmt.Sprint(parts[len(parts)-1])
	body = s.mustDo(c, "POST", "/MAAS/api/2.0/nodes/"+id+"/raids/", url.Values{"name": {"md0"}, "level": {"raid-1"}, "partitions": {free}}, csrf, http.StatusBadRequest)
	mustContain(t, body, "RAID level 1 must have at least 2 raid devices and any number of spares.")
	s.mustDo(c, "POST", "/MAAS/api/2.0/nodes/"+id+"/volume-groups/", url.Values{"name": {"vgdata"}, "partitions": {free}}, csrf, http.StatusOK)
	var vgs []struct {
		ID   int    `json:"id"`
		Name string `json:"name"`
	}
	_ = json.Unmarshal([]byte(s.page(c, "/MAAS/api/2.0/nodes/"+id+"/volume-groups/")), &vgs)
	vg := 0
	for _, v := range vgs {
		if v.Name == "vgdata" {
			vg = v.ID
		}
	}
	page = s.page(c, "/MAAS/machine/"+id)
	mustContain(t, page, fmt.Sprintf(`<option value="%d">vgdata</option>`, vg))
	s.mustDo(c, "POST", fmt.Sprintf("/MAAS/api/2.0/nodes/%s/volume-group/%d/?op=create_logical_volume", id, vg), url.Values{"name": {"lvdata"}, "size": {"2G"}}, csrf, http.StatusOK)
	mustContain(t, s.page(c, "/MAAS/machine/"+id), "vgdata-lvdata", "lvdata (1.9 GiB)")
}
