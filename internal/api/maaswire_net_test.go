package api_test

import (
	"encoding/json"
	"testing"
)

// TestMAASCLINetwork sends what `maas PROFILE fabrics create`, `vlans
// create 1 vid=...`, `vlan update 1 14 space=...`, `subnets create
// cidr=... vlan=...`, `ipranges create`, `static-routes create` and
// `ipaddresses reserve` send, multipart and base64 as the CLI encodes
// them, and reads back what was stored.
func TestMAASCLINetwork(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		decode := func(a wireAnswer, v any) {
			t.Helper()
			if err := json.Unmarshal(a.body, v); err != nil {
				t.Fatalf("%s: %v", a.body, err)
			}
		}
		var f struct{ ID int64 }
		decode(e.mustCLI(200, "POST", "fabrics/", e.admin, cliBody(cliPart{name: "name", value: "uplink"})), &f)
		fid := itoaT(f.ID)
		e.mustCLI(200, "POST", "spaces/", e.admin, cliBody(cliPart{name: "name", value: "dmz"}))
		var vl struct {
			ID    int64
			VID   int
			Name  string
			Space string
		}
		decode(e.mustCLI(200, "POST", "fabrics/"+fid+"/vlans/", e.admin, cliBody(cliPart{name: "vid", value: "14"}, cliPart{name: "name", value: "édge"})), &vl)
		if vl.VID != 14 || vl.Name != "édge" {
			t.Fatalf("vlan %+v", vl)
		}
		decode(e.mustCLI(200, "PUT", "fabrics/"+fid+"/vlans/14/", e.admin, cliBody(cliPart{name: "space", value: "dmz"})), &vl)
		if vl.Space != "dmz" {
			t.Fatalf("vlan after update %+v", vl)
		}
		var sn struct {
			ID    int64
			Space string
			VLAN  struct{ VID int } `json:"vlan"`
		}
		decode(e.mustCLI(200, "POST", "subnets/", e.admin, cliBody(cliPart{name: "cidr", value: "198.51.100.0/24"},
			cliPart{name: "vlan", value: itoaT(vl.ID)}, cliPart{name: "gateway_ip", value: "198.51.100.1"})), &sn)
		if sn.VLAN.VID != 14 || sn.Space != "dmz" {
			t.Fatalf("subnet %+v", sn)
		}
		e.mustCLI(200, "POST", "ipranges/", e.admin, cliBody(cliPart{name: "type", value: "dynamic"},
			cliPart{name: "start_ip", value: "198.51.100.100"}, cliPart{name: "end_ip", value: "198.51.100.150"}))
		other := struct{ ID int64 }{}
		decode(e.mustCLI(200, "POST", "subnets/", e.admin, cliBody(cliPart{name: "cidr", value: "192.0.2.0/24"})), &other)
		e.mustCLI(200, "POST", "static-routes/", e.admin, cliBody(cliPart{name: "source", value: itoaT(sn.ID)},
			cliPart{name: "destination", value: itoaT(other.ID)}, cliPart{name: "gateway_ip", value: "198.51.100.254"}))
		var ip struct{ IP string }
		decode(e.mustCLI(200, "POST", "ipaddresses/?op=reserve", e.admin, cliBody(cliPart{name: "ip", value: "198.51.100.7"},
			cliPart{name: "hostname", value: "printer"})), &ip)
		if ip.IP != "198.51.100.7" {
			t.Fatalf("reserved %+v", ip)
		}
		var stats struct {
			NumUnavailable int `json:"num_unavailable"`
		}
		decode(e.mustCLI(200, "GET", "subnets/"+itoaT(sn.ID)+"/?op=statistics", e.admin, nil), &stats)
		if stats.NumUnavailable != 1+51+1+1 { // gateway, dynamic range, the route's router, the reservation
			t.Fatalf("statistics %+v", stats)
		}
		e.mustCLI(204, "POST", "ipaddresses/?op=release", e.admin, cliBody(cliPart{name: "ip", value: "198.51.100.7"}))
	})
}
