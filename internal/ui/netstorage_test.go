package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/scripts"
	"github.com/anvilmetal/anvil/internal/serve"
	"github.com/anvilmetal/anvil/internal/storage"
	"github.com/anvilmetal/anvil/internal/store"
)

// readyMachine adds a machine with two NICs through the API and makes it
// Ready with two commissioned disks, as commissioning leaves it. It
// returns its system ID.
func (s *site) readyMachine(c *http.Client, csrf, hostname string, mac byte) string {
	s.t.Helper()
	add := url.Values{"hostname": {hostname}, "architecture": {"amd64/generic"},
		"mac_addresses": {fmt.Sprintf("52:54:00:bb:%02x:01", mac), fmt.Sprintf("52:54:00:bb:%02x:02", mac)}}
	code, _, body := s.do(c, "POST", "/MAAS/api/2.0/machines/", add, map[string]string{"X-CSRFToken": csrf})
	if code != http.StatusOK {
		s.t.Fatalf("add %s: %d %s", hostname, code, body)
	}
	var m struct {
		SystemID string `json:"system_id"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		s.t.Fatal(err)
	}
	// Commissioning puts the NICs on the VLAN the rack saw them on.
	untagged, err := s.srv.Store.GetVLANByVID(context.Background(), store.DefaultFabricID, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, ifc := range s.ifaceIDs(c, m.SystemID) {
		s.mustDo(c, "PUT", fmt.Sprintf("/MAAS/api/2.0/nodes/%s/interfaces/%d/", m.SystemID, ifc), url.Values{"vlan": {fmt.Sprint(untagged.ID)}}, csrf, http.StatusOK)
	}
	const gib = int64(1) << 30
	cfg := storage.Config{Disks: []storage.Disk{
		{Name: "sda", Model: "QEMU HARDDISK", Serial: "disk-a", Size: 40 * gib, BlockSize: 512, Tags: []string{"rotary"}},
		{Name: "sdb", Model: "QEMU HARDDISK", Serial: "disk-b", Size: 20 * gib, BlockSize: 512, Tags: []string{"ssd"}},
	}}.WithIDs()
	if _, err := s.srv.Store.UpdateMachine(context.Background(), m.SystemID, func(mm *machine.Machine) ([]machine.Event, error) {
		mm.Status, mm.StorageConfig = machine.Ready, &cfg
		return nil, nil
	}); err != nil {
		s.t.Fatal(err)
	}
	return m.SystemID
}

// asAda logs ada in and adds a Ready machine of two NICs and two disks
// named hostname (MACs 52:54:00:bb:mac:0x).
func (s *site) asAda(hostname string, mac byte) (c *http.Client, csrf, id string) {
	c = newClient(s.t)
	_, csrf = s.login(c, "ada", adaPass)
	return c, csrf, s.readyMachine(c, csrf, hostname, mac)
}

// asBob adds the non-admin bob and logs him in.
func (s *site) asBob() (*http.Client, string) {
	s.t.Helper()
	if err := serve.SetPassword(context.Background(), s.data, s.db, "bob", "Bobs-password-1", false); err != nil {
		s.t.Fatal(err)
	}
	bob := newClient(s.t)
	_, csrf := s.login(bob, "bob", "Bobs-password-1")
	return bob, csrf
}

// scriptResult stores a run of one script on machine id as the
// environment reports it: started, ended after took, with its output.
func (s *site) scriptResult(id string, typ scripts.Type, r store.ScriptResult, took time.Duration) int64 {
	s.t.Helper()
	ctx := context.Background()
	t0 := time.Now().Add(-time.Minute).UTC()
	set, err := s.srv.Store.CreateScriptSet(ctx, store.ScriptSet{SystemID: id, ResultType: typ, Created: t0,
		Results: []store.ScriptResult{{Name: r.Name, HardwareType: r.HardwareType, Instance: r.Instance}}})
	if err != nil {
		s.t.Fatal(err)
	}
	rid := set.Results[0].ID
	if _, err := s.srv.Store.UpdateScriptResult(ctx, id, rid, func(x *store.ScriptResult) error {
		x.Status, x.ExitStatus, x.Output, x.Started, x.Ended = r.Status, r.ExitStatus, r.Output, t0, t0.Add(took)
		return nil
	}); err != nil {
		s.t.Fatal(err)
	}
	return rid
}

func (s *site) mustDo(c *http.Client, method, path string, form url.Values, csrf string, want int) string {
	s.t.Helper()
	code, _, body := s.do(c, method, path, form, map[string]string{"X-CSRFToken": csrf})
	if code != want {
		s.t.Fatalf("%s %s %v: %d, want %d\n%s", method, path, form, code, want, body)
	}
	return body
}

func (s *site) page(c *http.Client, path string) string {
	s.t.Helper()
	code, _, body := s.do(c, "GET", path, nil, nil)
	if code != http.StatusOK {
		s.t.Fatalf("GET %s: %d\n%s", path, code, body)
	}
	return body
}

func mustContain(t *testing.T, page string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Fatalf("the page lacks %q:\n%s", w, page)
		}
	}
}

func mustLack(t *testing.T, page string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(page, w) {
			t.Fatalf("the page has %q", w)
		}
	}
}

// ifaceIDs reads a machine's interfaces from the API, by name.
func (s *site) ifaceIDs(c *http.Client, id string) map[string]int {
	s.t.Helper()
	var is []struct {
		ID   int    `json:"id"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(s.page(c, "/MAAS/api/2.0/nodes/"+id+"/interfaces/")), &is); err != nil {
		s.t.Fatal(err)
	}
	out := map[string]int{}
	for _, i := range is {
		out[i.Name] = i.ID
	}
	return out
}

// The machine page's network section shows what the interfaces API
// changed (a bond of the two NICs, a subnet link) and offers its forms to
// admins only; the API's refusals are the ones its forms show.
func TestMachineNetworkSection(t *testing.T) { eachDB(t, testMachineNetworkSection, nil) }

func testMachineNetworkSection(t *testing.T, s *site) {
	c, csrf, id := s.asAda("net-1", 1)
	page := s.page(c, "/MAAS/machine/"+id)
	mustContain(t, page, `id="net-interfaces"`, "52:54:00:bb:01:02", `id="create-bond"`, `name="parents"`, "fabric-0.untagged")

	ids := s.ifaceIDs(c, id)
	if len(ids) != 2 {
		t.Fatalf("interfaces %v", ids)
	}
	// What the bond form sends: refused without parents, in MAAS's words.
	body := s.mustDo(c, "POST", "/MAAS/api/2.0/nodes/"+id+"/interfaces/?op=create_bond", url.Values{"name": {"bond0"}, "bond_mode": {"802.3ad"}}, csrf, http.StatusBadRequest)
	mustContain(t, body, "A bond interface must have one or more parents.")
	var parents []string
	for _, v := range ids {
		parents = append(parents, fmt.Sprint(v))
	}
	s.mustDo(c, "POST", "/MAAS/api/2.0/nodes/"+id+"/interfaces/?op=create_bond", url.Values{"name": {"bond0"}, "bond_mode": {"802.3ad"}, "parents": parents}, csrf, http.StatusOK)
	s.mustDo(c, "POST", "/MAAS/api/2.0/subnets/", url.Values{"cidr": {"192.0.2.0/24"}, "gateway_ip": {"192.0.2.1"}}, csrf, http.StatusOK)
	bond := s.ifaceIDs(c, id)["bond0"]
	var sn []struct {
		ID int `json:"id"`
	}
	_ = json.Unmarshal([]byte(s.page(c, "/MAAS/api/2.0/subnets/")), &sn)
	s.mustDo(c, "POST", fmt.Sprintf("/MAAS/api/2.0/nodes/%s/interfaces/%d/?op=link_subnet", id, bond),
		url.Values{"mode": {"STATIC"}, "subnet": {fmt.Sprint(sn[0].ID)}, "ip_address": {"192.0.2.20"}}, csrf, http.StatusOK)
	page = s.page(c, "/MAAS/machine/"+id)
	mustContain(t, page, `id="iface-bond0"`, "bond (802.3ad)", "static 192.0.2.0/24 192.0.2.20", ">Unlink<")
	// The network page lists the subnet with what is used of it: the
	// gateway and the static address.
	mustContain(t, s.page(c, "/MAAS/network"), "192.0.2.0/24", "fabric-0.untagged", "2 of 254", "undefined")
	// The link's unlink form names it; a wrong id is refused in words.
	link := regexp.MustCompile(`interfaces/(\d+)/\?op=unlink_subnet" data-after="reload"><input type="hidden" name="id" value="(\d+)"`).FindStringSubmatch(page)
	if link == nil || link[1] != fmt.Sprint(bond) {
		t.Fatalf("no unlink form for the bond's link: %v", link)
	}
	body = s.mustDo(c, "POST", "/MAAS/api/2.0/nodes/"+id+"/interfaces/"+link[1]+"/?op=unlink_subnet", url.Values{"id": {"999999"}}, csrf, http.StatusBadRequest)
	mustContain(t, body, "999999")
	s.mustDo(c, "POST", "/MAAS/api/2.0/nodes/"+id+"/interfaces/"+link[1]+"/?op=unlink_subnet", url.Values{"id": {link[2]}}, csrf, http.StatusOK)
	mustLack(t, s.page(c, "/MAAS/machine/"+id), "static 192.0.2.0/24 192.0.2.20")
	mustContain(t, s.page(c, "/MAAS/network"), "1 of 254")
	// A bridge on the bond, and its delete button.
	s.mustDo(c, "POST", "/MAAS/api/2.0/nodes/"+id+"/interfaces/?op=create_bridge", url.Values{"name": {"br0"}, "parent": {fmt.Sprint(bond)}}, csrf, http.StatusOK)
	page = s.page(c, "/MAAS/machine/"+id)
	mustContain(t, page, `id="iface-br0"`, "<td>bond0</td>")
	br := s.ifaceIDs(c, id)["br0"]
	mustContain(t, page, fmt.Sprintf(`data-api="DELETE nodes/%s/interfaces/%d/"`, id, br))
	s.mustDo(c, "DELETE", fmt.Sprintf("/MAAS/api/2.0/nodes/%s/interfaces/%d/", id, br), nil, csrf, http.StatusNoContent)
	mustLack(t, s.page(c, "/MAAS/machine/"+id), `id="iface-br0"`)

	// A non-admin sees the network and the machine's interfaces, but no
	// forms, and the API refuses it the change.
	bob, bobCSRF := s.asBob()
	page = s.page(bob, "/MAAS/machine/"+id)
	mustContain(t, page, `id="iface-bond0"`)
	mustLack(t, page, `id="create-bond"`, ">Unlink<", `id="apply-layout"`)
	mustContain(t, s.page(bob, "/MAAS/network"), "192.0.2.0/24")
	s.mustDo(bob, "POST", "/MAAS/api/2.0/nodes/"+id+"/interfaces/?op=create_vlan", url.Values{"parent": parents[:1], "vlan": {"1"}}, bobCSRF, http.StatusForbidden)
}

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

type blockDev struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

func (s *site) blockDevices(c *http.Client, id string) []blockDev {
	s.t.Helper()
	var out []blockDev
	if err := json.Unmarshal([]byte(s.page(c, "/MAAS/api/2.0/nodes/"+id+"/blockdevices/")), &out); err != nil {
		s.t.Fatal(err)
	}
	return out
}

func (s *site) partitions(c *http.Client, id string, dev int) []int {
	s.t.Helper()
	var ps []struct {
		ID int `json:"id"`
	}
	if err := json.Unmarshal([]byte(s.page(c, fmt.Sprintf("/MAAS/api/2.0/nodes/%s/blockdevices/%d/partitions/", id, dev))), &ps); err != nil {
		s.t.Fatal(err)
	}
	var out []int
	for _, p := range ps {
		out = append(out, p.ID)
	}
	return out
}

// The DNS page lists domains, what the racks serve of one (a deployed
// machine's name included) and the records people added, and answers a
// name from the same zones.
func TestDNSPage(t *testing.T) { eachDB(t, testDNSPage, nil) }

func testDNSPage(t *testing.T, s *site) {
	c, csrf, id := s.asAda("dns-1", 3)
	// The machine is deployed and was seen with an address: the racks
	// name it.
	ctx := context.Background()
	if _, err := s.srv.Store.UpdateMachine(ctx, id, func(m *machine.Machine) ([]machine.Event, error) {
		m.Status = machine.Deployed
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.srv.Store.NoteDiscovery(ctx, store.Discovery{MAC: "52:54:00:bb:03:01", IP: "192.0.2.33", LastWhat: "dhcp ack 192.0.2.33"}); err != nil {
		t.Fatal(err)
	}
	body := s.mustDo(c, "POST", "/MAAS/api/2.0/dnsresourcerecords/", url.Values{"name": {"www"}, "domain": {"maas"}, "rrtype": {"CNAME"}, "rrdata": {"dns-1.maas."}}, csrf, http.StatusOK)
	mustContain(t, body, "www")
	body = s.mustDo(c, "POST", "/MAAS/api/2.0/dnsresourcerecords/", url.Values{"name": {"bad"}, "domain": {"maas"}, "rrtype": {"MX"}, "rrdata": {"not an mx"}}, csrf, http.StatusBadRequest)
	if !strings.Contains(body, "rrdata") {
		t.Fatalf("a bad MX was refused without naming rrdata: %s", body)
	}

	page := s.page(c, "/MAAS/dns")
	mustContain(t, page, `id="dns-domains"`, `href="/MAAS/dns?domain=maas"`, "Records of maas", "dns-1.maas.", "192.0.2.33", "www.maas.", "CNAME", `id="add-record"`, `data-api="DELETE dnsresourcerecords/`)

	// The lookup follows the CNAME to the machine's address, with TTLs.
	page = s.page(c, "/MAAS/dns?q=www.maas&type=A")
	mustContain(t, page, `id="dns-answer"`, "www.maas. A</strong>: NOERROR", "dns-1.maas.", "192.0.2.33")
	page = s.page(c, "/MAAS/dns?q=nope.maas&type=A")
	mustContain(t, page, "NXDOMAIN", "No such name in the zone.")
	page = s.page(c, "/MAAS/dns?q=example.com")
	mustContain(t, page, "REFUSED", "none of Anvil&#39;s zones")
	for _, q := range []string{"q=www.maas&type=BOGUS", "q=" + url.QueryEscape("bad name..x")} {
		if code, _, _ := s.do(c, "GET", "/MAAS/dns?"+q, nil, nil); code != http.StatusBadRequest {
			t.Fatalf("lookup %s: %d", q, code)
		}
	}
	if code, _, _ := s.do(c, "GET", "/MAAS/dns?domain=nosuch", nil, nil); code != http.StatusNotFound {
		t.Fatalf("an unknown domain: %d", code)
	}

	// A non-admin reads it all but gets no forms; the API refuses it.
	bob, bobCSRF := s.asBob()
	page = s.page(bob, "/MAAS/dns?q=www.maas&type=CNAME")
	mustContain(t, page, "www.maas.", "dns-1.maas.")
	mustLack(t, page, `id="add-record"`, `data-api="DELETE`)
	s.mustDo(bob, "POST", "/MAAS/api/2.0/dnsresourcerecords/", url.Values{"name": {"x"}, "domain": {"maas"}, "rrtype": {"TXT"}, "rrdata": {"hi"}}, bobCSRF, http.StatusForbidden)

	// The delete button's path is the record's: after it, the name is gone.
	del := regexp.MustCompile(`data-api="DELETE (dnsresourcerecords/\d+/)"`).FindStringSubmatch(s.page(c, "/MAAS/dns"))
	if del == nil {
		t.Fatal("no delete button for the CNAME")
	}
	s.mustDo(bob, "DELETE", "/MAAS/api/2.0/"+del[1], nil, bobCSRF, http.StatusForbidden)
	s.mustDo(c, "DELETE", "/MAAS/api/2.0/"+del[1], nil, csrf, http.StatusNoContent)
	mustLack(t, s.page(c, "/MAAS/dns"), "www.maas.")
	mustContain(t, s.page(c, "/MAAS/dns?q=www.maas&type=A"), "NXDOMAIN")
}

// Script results appear on the machine page with their status and
// runtime, each with a page of its output; the scripts page lists the
// scripts and offers an upload to admins. The rescue button is the
// lifecycle's.
func TestScriptsAndResults(t *testing.T) { eachDB(t, testScriptsAndResults, nil) }

func testScriptsAndResults(t *testing.T, s *site) {
	c, csrf, id := s.asAda("tests-1", 4)
	ctx := context.Background()
	exit := 1
	rid := s.scriptResult(id, scripts.Testing, store.ScriptResult{Name: "smartctl-validate", HardwareType: scripts.Storage, Instance: "sda",
		Status: scripts.Failed, ExitStatus: &exit, Output: []byte("SMART overall-health self-assessment test result: FAILED <b>\n")}, 1500*time.Millisecond)
	page := s.page(c, "/MAAS/machine/"+id)
	mustContain(t, page, `id="results"`, "testing", fmt.Sprintf(`href="/MAAS/machine/%s/results/%d"`, id, rid), "smartctl-validate", "sda", "Failed", "1.5s")
	page = s.page(c, fmt.Sprintf("/MAAS/machine/%s/results/%d", id, rid))
	mustContain(t, page, "self-assessment test result: FAILED &lt;b&gt;", `id="result-status">Failed`, "1.5s")
	for _, p := range []string{"/MAAS/machine/" + id + "/results/999999", "/MAAS/machine/nosuch/results/1"} {
		if code, _, _ := s.do(c, "GET", p, nil, nil); code != http.StatusNotFound {
			t.Fatalf("GET %s: %d", p, code)
		}
	}
	if code, _, _ := s.do(c, "GET", "/MAAS/machine/"+id+"/results/x", nil, nil); code != http.StatusBadRequest {
		t.Fatalf("a result id that is no number: %d", code)
	}

	page = s.page(c, "/MAAS/scripts")
	mustContain(t, page, `id="script-smartctl-validate"`, "shipped", `id="upload-script"`)
	// What the upload form sends: a multipart body with the file as
	// "script". A second script of the same name is refused in words.
	up := func(name, text string) (int, string) {
		var body bytes.Buffer
		w := multipart.NewWriter(&body)
		_ = w.WriteField("name", name)
		_ = w.WriteField("type", "testing")
		f, _ := w.CreateFormFile("script", name+".sh")
		_, _ = f.Write([]byte(text))
		_ = w.Close()
		req, _ := http.NewRequest("POST", s.base+"/MAAS/api/2.0/scripts/", &body)
		req.Header.Set("Content-Type", w.FormDataContentType())
		req.Header.Set("X-CSRFToken", csrf)
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(out)
	}
	if code, out := up("disk-check", "#!/bin/sh\n# --- Start MAAS 1.0 script metadata ---\n# hardware_type: storage\n# timeout: 00:05:00\n# --- End MAAS 1.0 script metadata ---\necho ok\n"); code != http.StatusOK {
		t.Fatalf("upload: %d %s", code, out)
	}
	if code, out := up("disk-check", "#!/bin/sh\necho again\n"); code != http.StatusBadRequest || !strings.Contains(out, "Script with this Name already exists.") {
		t.Fatalf("a second disk-check: %d %s", code, out)
	}
	mustContain(t, s.page(c, "/MAAS/scripts"), `id="script-disk-check"`, "<td>testing</td><td>Storage</td>", "5m0s")

	// Rescue mode is offered as the lifecycle allows, and taken through
	// the machine's ops.
	mustContain(t, s.page(c, "/MAAS/machine/"+id+"/actions"), `id="act-rescue_mode"`)
	s.mustDo(c, "POST", "/MAAS/api/2.0/machines/"+id+"/?op=rescue_mode", url.Values{}, csrf, http.StatusOK)
	if _, err := s.srv.Store.UpdateMachine(ctx, id, func(m *machine.Machine) ([]machine.Event, error) {
		m.Status = machine.RescueMode // the environment booted and reported
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	acts := s.page(c, "/MAAS/machine/"+id+"/actions")
	mustContain(t, acts, `id="act-exit_rescue_mode"`)
	mustLack(t, acts, `id="act-rescue_mode"`)

	// A non-admin sees a machine another user holds nowhere: not its
	// results either. It sees the scripts without the upload.
	if _, err := s.srv.Store.UpdateMachine(ctx, id, func(m *machine.Machine) ([]machine.Event, error) {
		m.Owner = "ada"
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	bob, bobCSRF := s.asBob()
	if code, _, _ := s.do(bob, "GET", fmt.Sprintf("/MAAS/machine/%s/results/%d", id, rid), nil, nil); code != http.StatusNotFound {
		t.Fatalf("bob reads ada's machine's result: %d", code)
	}
	page = s.page(bob, "/MAAS/scripts")
	mustContain(t, page, "smartctl-validate")
	mustLack(t, page, `id="upload-script"`)
	s.mustDo(bob, "POST", "/MAAS/api/2.0/scripts/", url.Values{"name": {"x"}, "script": {"#!/bin/sh\necho hi\n"}}, bobCSRF, http.StatusForbidden)
}

// The new pages send a visitor without a session to log in, the lookup
// box included: the zones list every machine.
func TestSectionPagesNeedLogin(t *testing.T) {
	s := start(t)
	c := newClient(t)
	for _, p := range []string{"/MAAS/network", "/MAAS/dns", "/MAAS/dns?q=node.maas", "/MAAS/scripts", "/MAAS/machine/abc/results/1"} {
		code, h, _ := s.do(c, "GET", p, nil, nil)
		if code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/MAAS/login?next=") {
			t.Errorf("anonymous GET %s: %d %q", p, code, h.Get("Location"))
		}
	}
}
