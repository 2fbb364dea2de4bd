package client

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"
)

// machineJSON is a machine as MAAS 2.0 renders it, owner null included.
const machineJSON = `{"system_id":"abc123","hostname":"web01","fqdn":"web01.maas",
"domain":{"id":0,"name":"maas"},"architecture":"amd64/generic","status":6,
"status_name":"Deployed","status_message":"Deployed","power_state":"on",
"power_type":"ipmi","owner":null,"zone":{"id":1,"name":"default","description":""},
"pool":{"id":1,"name":"default","description":""},"cpu_count":4,"memory":8192,
"storage":500107.86,"tag_names":["ssd"],"interface_set":[{"id":7,"name":"eth0",
"type":"physical","mac_address":"52:54:00:00:00:01","enabled":true,"links":[{"id":1,
"mode":"auto","ip_address":"10.0.0.5","subnet":{"id":2,"name":"lan","cidr":"10.0.0.0/24"}}]}],
"boot_interface":{"id":7,"name":"eth0","type":"physical","mac_address":"52:54:00:00:00:01",
"enabled":true,"links":[]},"ip_addresses":["10.0.0.5"],"hardware_uuid":"u-1",
"osystem":"ubuntu","distro_series":"noble","netboot":false,"description":"",
"resource_uri":"/MAAS/api/2.0/machines/abc123/"}`

func TestListMachinesPassesFiltersAndKeepsRaw(t *testing.T) {
	var q url.Values
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		q = r.URL.Query()
		io.WriteString(w, "["+machineJSON+"]")
	})
	ms, err := c.ListMachines(context.Background(), url.Values{"mac_address": {"a", "b"}, "zone": {"z"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(q["mac_address"]) != 2 || q.Get("zone") != "z" {
		t.Errorf("query = %v", q)
	}
	m := ms[0]
	if m.SystemID != "abc123" || m.Owner != "" || m.Zone.Name != "default" || m.Memory != 8192 ||
		m.Storage != 500107.86 || m.BootInterface == nil || m.Interfaces[0].Links[0].Subnet.CIDR != "10.0.0.0/24" {
		t.Errorf("decoded %+v", m)
	}
	if !json.Valid(m.Raw) || len(m.Raw) != len(machineJSON) {
		t.Errorf("Raw is not the server's bytes: %s", m.Raw)
	}
}

func TestMachineOpDispatch(t *testing.T) {
	var method, uri string
	var form url.Values
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		method, uri = r.Method, r.URL.RequestURI()
		r.ParseForm()
		form = r.PostForm
		io.WriteString(w, machineJSON)
	})
	m, err := c.MachineOp(context.Background(), "abc123", "deploy", url.Values{"distro_series": {"noble"}})
	if err != nil {
		t.Fatal(err)
	}
	if method != "POST" || uri != "/MAAS/api/2.0/machines/abc123/?op=deploy" || form.Get("distro_series") != "noble" {
		t.Errorf("%s %s form %v", method, uri, form)
	}
	if form.Has("op") {
		t.Errorf("op leaked into the form: %v", form)
	}
	if m.StatusName != "Deployed" {
		t.Errorf("machine %+v", m)
	}
}

func TestMachineRequests(t *testing.T) {
	var got []string
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+r.URL.RequestURI())
		switch r.URL.Query().Get("op") {
		case "query_power_state":
			io.WriteString(w, `{"state":"off"}`)
		case "":
			if r.Method == "DELETE" {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			fallthrough
		default:
			io.WriteString(w, machineJSON)
		}
	})
	ctx := context.Background()
	if _, err := c.GetMachine(ctx, "a/b"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteMachine(ctx, "abc123"); err != nil {
		t.Fatal(err)
	}
	ps, err := c.QueryPowerState(ctx, "abc123")
	if err != nil || ps.State != "off" {
		t.Fatalf("power state %+v, %v", ps, err)
	}
	if _, err := c.AllocateMachine(ctx, "abc123", nil); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"GET /MAAS/api/2.0/machines/a%2Fb/",
		"DELETE /MAAS/api/2.0/machines/abc123/",
		"GET /MAAS/api/2.0/machines/abc123/?op=query_power_state",
		"POST /MAAS/api/2.0/machines/?op=allocate",
	}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Fatalf("requests = %q, want %q", got, want)
		}
	}
}
