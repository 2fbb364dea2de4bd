package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/store"
)

// TestUnknownIDs calls every action of every resource whose path names an
// object, as the maas CLI sends it, with an id that names nothing: each is
// MAAS's 404 with Django's text naming the model, as text/plain.
func TestUnknownIDs(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		d := e.describe()
		// What MAAS does otherwise for these: a delete of no such user
		// is answered as done.
		skip := map[string]bool{"UserHandler delete": true}
		ids := map[string]string{"system_id": "xyz999", "id": "987654", "device_id": "987654", "boot_source_id": "987654", "name": "nosuch", "username": "nosuch",
			"fabric_id": "987654", "vid": "987"}
		n := 0
		for _, res := range d.Resources {
			h := res.Auth
			if h == nil || len(h.Params) == 0 {
				continue
			}
			model := strings.TrimSuffix(h.Name, "Handler")
			if strings.HasPrefix(h.Name, "BootSourceSelection") {
				model = "BootSource" // MAAS looks the source up first
			}
			if h.Name == "DNSResourceRecordHandler" {
				model = "DNSData" // MAAS's model of a record
			}
			if strings.Contains(h.Path, "/nodes/{system_id}/") && !strings.HasSuffix(h.Path, "/nodes/{system_id}/") {
				model = "Machine" // so it does the machine of a machine's storage
			}
			if strings.HasPrefix(h.Name, "NodeScriptResult") {
				model = "Node" // MAAS looks the node up first
			}
			if h.Name == "NodeScriptHandler" {
				model = "Script" // MAAS's model
			}
			if h.Name == "InterfaceHandler" {
				model = "Interface" // MAAS looks the interface up by its node's system_id at once
			}
			if h.Name == "InterfacesHandler" {
				model = "Node" // a node's collection: the node is what is missing
			}
			if h.Name == "ReservedIpHandler" {
				model = "ReservedIP" // MAAS's model; its handler spells it Ip
			}
			if strings.HasPrefix(h.Name, "Vlan") {
				model = "Fabric" // and a VLAN's fabric
			}
			path := strings.TrimPrefix(h.Path, "/MAAS/api/2.0/")
			for _, p := range h.Params {
				path = strings.Replace(path, "{"+p+"}", ids[p], 1)
			}
			for _, a := range h.Actions {
				if skip[h.Name+" "+a.Name] {
					continue
				}
				p := path
				if a.Op != nil {
					p += "?op=" + *a.Op
				}
				var body []byte
				if a.Method == http.MethodPost || a.Method == http.MethodPut {
					body = cliBody(cliPart{name: "description", value: "x"})
				}
				got := e.cli(a.Method, p, e.admin, body)
				want := "No " + model + " matches the given query."
				if got.code != http.StatusNotFound || string(got.body) != want || got.header.Get("Content-Type") != "text/plain" {
					t.Errorf("%s %s (%s): %d %q %q, want 404 %q as text/plain", a.Method, p, h.Name, got.code, got.body, got.header.Get("Content-Type"), want)
				}
				n++
			}
		}
		if n < 40 {
			t.Fatalf("only %d actions on objects tried", n)
		}
		// The chunked upload is served beside the route table.
		for path, want := range map[string]string{
			"boot-resources/987654/upload/1/": "No BootResource matches the given query.",
			"boot-resources/" + strconv.FormatInt(e.storedBootResource(), 10) + "/upload/987654/": "No BootResourceFile matches the given query.",
		} {
			got := e.cli("PUT", path, e.admin, []byte("x"))
			if got.code != http.StatusNotFound || string(got.body) != want {
				t.Errorf("PUT %s: %d %q, want 404 %q", path, got.code, got.body, want)
			}
		}
	})
}

// TestFieldErrorTexts: objects named in parameters that do not exist are
// 400s keyed by the field, in MAAS's (Django's) words, as JSON, and
// nothing is changed.
func TestFieldErrorTexts(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		a := e.addMachine("node-a", "52:54:00:00:02:0a", nil)
		e.must(200, "POST", "tags/", e.admin, url.Values{"name": {"fast"}}, nil)
		for _, c := range []struct {
			method, path string
			body         []byte
			field, msg   string
		}{
			{"POST", "machines/", cliBody(cliPart{name: "mac_addresses", value: "52:54:00:00:02:0b"}, cliPart{name: "architecture", value: "amd64/generic"}, cliPart{name: "zone", value: "nosuch"}),
				"zone", "Select a valid choice. nosuch is not one of the available choices."},
			{"PUT", "machines/" + a.SystemID + "/", cliBody(cliPart{name: "pool", value: "nosuch"}),
				"pool", "Select a valid choice. nosuch is not one of the available choices."},
			{"POST", "tags/fast/?op=update_nodes", cliBody(cliPart{name: "add", value: a.SystemID}, cliPart{name: "add", value: "xyz999"}),
				"add", "No such node(s): xyz999."},
		} {
			got := e.cli(c.method, c.path, e.admin, c.body)
			var m map[string][]string
			if got.code != 400 || got.header.Get("Content-Type") != "application/json; charset=utf-8" || json.Unmarshal(got.body, &m) != nil ||
				len(m) != 1 || len(m[c.field]) != 1 || m[c.field][0] != c.msg {
				t.Errorf("%s %s: %d %q %s, want 400 {%q: [%q]}", c.method, c.path, got.code, got.header.Get("Content-Type"), got.body, c.field, c.msg)
			}
		}
		if n := e.countMachines(); n != 1 {
			t.Fatalf("%d machines after refused creates, want 1", n)
		}
		if m := e.machine(a.SystemID); len(m.TagNames) != 0 || m.Pool.Name != "default" {
			t.Fatalf("refused calls changed the machine: tags %v pool %q", m.TagNames, m.Pool.Name)
		}
		// Another user's SSH key is not found for the caller.
		var k struct{ ID int64 }
		e.must(201, "POST", "account/prefs/sshkeys/", e.admin, url.Values{"key": {testKey(7, "admin@desk")}}, &k)
		got := e.cli("GET", "account/prefs/sshkeys/"+strconv.FormatInt(k.ID, 10)+"/", e.user, nil)
		if got.code != 404 || string(got.body) != "No SSHKey matches the given query." {
			t.Fatalf("another user's key: %d %q", got.code, got.body)
		}
	})
}

// storedBootResource stores an image record (no bytes) and returns its id.
func (e *env) storedBootResource() int64 {
	e.t.Helper()
	b, err := e.srv.Store.CreateBootResource(context.Background(), store.BootResource{Name: "ubuntu/noble", Architecture: "amd64/generic"},
		store.BootResourceFile{Version: "20260101", Label: "uploaded", Filename: "root.tgz", Filetype: "tgz", SHA256: strings.Repeat("e", 64), Size: 10})
	if err != nil {
		e.t.Fatal(err)
	}
	return b.ID
}
