package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
)

// TestInterfacesMAASCLI sends what `maas PROFILE interfaces create-bond`,
// `create-vlan` and `interface link-subnet` send (every parameter a
// base64 part, parents repeated, the op in the query) and `interface
// delete`, and reads back what was built.
func TestInterfacesMAASCLI(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		f := newNetFixture(t, e)
		m := e.addMachine("wire", "52:54:00:16:03:01", url.Values{"mac_addresses": {"52:54:00:16:03:01", "52:54:00:16:03:02"}})
		base := "nodes/" + m.SystemID + "/interfaces/"
		is := e.ifaces(m.SystemID)
		for _, i := range is {
			e.mustCLI(http.StatusOK, http.MethodPut, base+id(i)+"/", e.admin, cliBody(cliPart{name: "vlan", value: itoa(f.untagged.ID)}))
		}
		a := e.mustCLI(http.StatusOK, http.MethodPost, base+"?op=create_bond", e.admin, cliBody(
			cliPart{name: "name", value: "bond0"}, cliPart{name: "parents", value: id(is["eth0"])}, cliPart{name: "parents", value: id(is["eth1"])},
			cliPart{name: "bond_mode", value: "802.3ad"}, cliPart{name: "bond_lacp_rate", value: "fast"}, cliPart{name: "bond_xmit_hash_policy", value: "layer3+4"}))
		var bond apiIface
		if err := json.Unmarshal(a.body, &bond); err != nil || len(bond.Parents) != 2 {
			t.Fatalf("create_bond: %s %v", a.body, err)
		}
		var params map[string]any
		if err := json.Unmarshal(bond.Params, &params); err != nil || params["bond_mode"] != "802.3ad" || params["bond_lacp_rate"] != "fast" ||
			params["bond_xmit_hash_policy"] != "layer3+4" || params["bond_miimon"] != float64(100) {
			t.Fatalf("bond params: %s", bond.Params)
		}
		a = e.mustCLI(http.StatusOK, http.MethodPost, base+"?op=create_vlan", e.admin, cliBody(
			cliPart{name: "vlan", value: itoa(f.vlan100.ID)}, cliPart{name: "parent", value: id(bond)}))
		var vl apiIface
		if err := json.Unmarshal(a.body, &vl); err != nil || vl.Name != "bond0.100" {
			t.Fatalf("create_vlan: %s %v", a.body, err)
		}
		a = e.mustCLI(http.StatusOK, http.MethodPost, base+id(vl)+"/?op=link_subnet", e.admin, cliBody(
			cliPart{name: "mode", value: "static"}, cliPart{name: "subnet", value: itoa(f.subnet.ID)}, cliPart{name: "ip_address", value: "198.51.100.20"}))
		var linked apiIface
		if err := json.Unmarshal(a.body, &linked); err != nil || len(linked.Links) != 1 || linked.Links[0].IPAddress != "198.51.100.20" {
			t.Fatalf("link_subnet: %s %v", a.body, err)
		}
		// A bad value is a field error the CLI prints.
		if a := e.cli(http.MethodPost, base+id(vl)+"/?op=link_subnet", e.admin, cliBody(cliPart{name: "mode", value: "STATIC"},
			cliPart{name: "subnet", value: itoa(f.subnet.ID)}, cliPart{name: "ip_address", value: "not-an-ip"})); a.code != http.StatusBadRequest ||
			a.header.Get("Content-Type") == "" {
			t.Fatalf("bad ip_address: %d %s", a.code, a.body)
		}
		e.mustCLI(http.StatusNoContent, http.MethodDelete, base+id(vl)+"/", e.admin, nil)
		if _, ok := e.ifaces(m.SystemID)["bond0.100"]; ok {
			t.Fatal("VLAN interface still there")
		}
	})
}
