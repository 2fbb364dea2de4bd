package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
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
