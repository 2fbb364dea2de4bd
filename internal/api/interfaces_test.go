package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

type apiLink struct {
	ID        int64  `json:"id"`
	Mode      string `json:"mode"`
	IPAddress string `json:"ip_address"`
	Subnet    *struct {
		ID   int64  `json:"id"`
		CIDR string `json:"cidr"`
	} `json:"subnet"`
}

type apiIface struct {
	ID       int64           `json:"id"`
	Name     string          `json:"name"`
	Type     string          `json:"type"`
	MAC      string          `json:"mac_address"`
	Parents  []string        `json:"parents"`
	Children []string        `json:"children"`
	Tags     []string        `json:"tags"`
	Links    []apiLink       `json:"links"`
	Params   json.RawMessage `json:"params"`
	MTU      int             `json:"effective_mtu"`
	VLAN     *struct {
		ID  int64 `json:"id"`
		VID int   `json:"vid"`
	} `json:"vlan"`
}

// netFixture is a site with fabric-0's untagged VLAN, VLAN 100 on it and
// a subnet there with a dynamic range.
type netFixture struct {
	untagged, vlan100 store.VLAN
	subnet            store.Subnet
}

func newNetFixture(t *testing.T, e *env) netFixture {
	t.Helper()
	ctx := context.Background()
	var f netFixture
	var err error
	if f.untagged, err = e.srv.Store.GetVLANByVID(ctx, store.DefaultFabricID, 0); err != nil {
		t.Fatal(err)
	}
	if f.vlan100, err = e.srv.Store.CreateVLAN(ctx, store.VLAN{FabricID: store.DefaultFabricID, VID: 100, Name: "v100", MTU: 1500}); err != nil {
		t.Fatal(err)
	}
	if f.subnet, err = e.srv.Store.CreateSubnet(ctx, store.Subnet{Name: "tenant", CIDR: "198.51.100.0/24", Gateway: "198.51.100.1",
		DNSServers: []string{"198.51.100.53"}, VLANID: f.vlan100.ID, Managed: true, AllowDNS: true, LeaseSeconds: 600}); err != nil {
		t.Fatal(err)
	}
	if _, err = e.srv.Store.CreateIPRange(ctx, store.IPRange{SubnetID: f.subnet.ID, Type: "dynamic", Start: "198.51.100.200", End: "198.51.100.250"}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (e *env) ifaces(systemID string) map[string]apiIface {
	e.t.Helper()
	var list []apiIface
	e.must(http.StatusOK, http.MethodGet, "nodes/"+systemID+"/interfaces/", e.admin, nil, &list)
	out := map[string]apiIface{}
	for _, i := range list {
		out[i.Name] = i
	}
	return out
}

func id(i apiIface) string { return strconv.FormatInt(i.ID, 10) }

// wantFieldError calls and checks for a 400 naming field with words
// containing msg.
func (e *env) wantFieldError(method, path, key string, form url.Values, field, msg string) {
	e.t.Helper()
	code, b := e.call(method, path, key, form)
	var fe map[string][]string
	if code != http.StatusBadRequest || json.Unmarshal(b, &fe) != nil || !strings.Contains(strings.Join(fe[field], " "), msg) {
		e.t.Fatalf("%s %s %v: %d %s; want 400 with %s: %q", method, path, form, code, b, field, msg)
	}
}

// TestInterfacesBondVLANStatic builds an active-backup bond of two NICs,
// VLAN 100 on it with a STATIC address, over HTTP, and checks what MAAS
// refuses: a member already in a bond, a STATIC address in a dynamic
// range or held by another machine, non-admins, a deployed machine.
func TestInterfacesBondVLANStatic(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		f := newNetFixture(t, e)
		m := e.addMachine("bonded", "52:54:00:16:00:01", url.Values{"mac_addresses": {"52:54:00:16:00:01", "52:54:00:16:00:02"}})
		base := "nodes/" + m.SystemID + "/interfaces/"
		is := e.ifaces(m.SystemID)
		if len(is) != 2 {
			t.Fatalf("interfaces: %+v", is)
		}
		nics := []apiIface{is["eth0"], is["eth1"]}
		for _, i := range nics {
			e.must(http.StatusOK, http.MethodPut, base+id(i)+"/", e.admin, url.Values{"vlan": {itoa(f.untagged.ID)}}, nil)
		}
		// Not for non-admins.
		bondForm := url.Values{"op": {"create_bond"}, "name": {"bond0"}, "parents": {id(nics[0]), id(nics[1])}, "bond_mode": {"active-backup"}}
		if code, b := e.call(http.MethodPost, base, e.user, bondForm); code != http.StatusForbidden && code != http.StatusNotFound {
			t.Fatalf("non-admin create_bond: %d %s", code, b)
		}
		e.wantFieldError(http.MethodPost, base, e.admin, url.Values{"op": {"create_bond"}, "name": {"bond0"}, "parents": {id(nics[0])}, "bond_mode": {"fastest"}},
			"bond_mode", "'fastest' is not a valid bond_mode.")
		var bond apiIface
		e.must(http.StatusOK, http.MethodPost, base, e.admin, bondForm, &bond)
		if bond.Type != "bond" || strings.Join(bond.Parents, ",") != "eth0,eth1" || !strings.Contains(string(bond.Params), `"bond_mode":"active-backup"`) ||
			bond.VLAN == nil || bond.VLAN.ID != f.untagged.ID {
			t.Fatalf("bond: %+v %s", bond, bond.Params)
		}
		// A member cannot be in two bonds; the answer is the new bond's
		// fault alone, not the old bond's that it would cause.
		e.wantFieldError(http.MethodPost, base, e.admin, url.Values{"op": {"create_bond"}, "name": {"bond1"}, "parents": {id(nics[0])}},
			"parents", "Interfaces already in-use: eth0.")
		if _, b := e.call(http.MethodPost, base, e.admin, url.Values{"op": {"create_bond"}, "name": {"bond1"}, "parents": {id(nics[0])}}); strings.Contains(string(b), "bond0.") {
			t.Fatalf("another interface's errors: %s", b)
		}
		var vl apiIface
		e.must(http.StatusOK, http.MethodPost, base, e.admin, url.Values{"op": {"create_vlan"}, "vlan": {itoa(f.vlan100.ID)}, "parent": {id(bond)}}, &vl)
		if vl.Name != "bond0.100" || vl.Type != "vlan" || vl.VLAN == nil || vl.VLAN.VID != 100 {
			t.Fatalf("vlan: %+v", vl)
		}
		// The same VLAN twice on one parent is refused.
		e.wantFieldError(http.MethodPost, base, e.admin, url.Values{"op": {"create_vlan"}, "vlan": {itoa(f.vlan100.ID)}, "parent": {id(bond)}, "name": {"again"}},
			"vlan", "bond0 already has VLAN 100")
		link := base + id(vl) + "/"
		sn := itoa(f.subnet.ID)
		e.wantFieldError(http.MethodPost, link, e.admin, url.Values{"op": {"link_subnet"}, "mode": {"STATIC"}, "subnet": {sn}, "ip_address": {"198.51.100.220"}},
			"ip_address", "IP address is inside a dynamic range")
		e.wantFieldError(http.MethodPost, link, e.admin, url.Values{"op": {"link_subnet"}, "mode": {"STATIC"}, "subnet": {sn}, "ip_address": {"192.0.2.9"}},
			"ip_address", "IP address is not in the given subnet '198.51.100.0/24'.")
		e.wantFieldError(http.MethodPost, link, e.admin, url.Values{"op": {"link_subnet"}, "mode": {"SOMETIMES"}, "subnet": {sn}},
			"mode", "'SOMETIMES' is not a valid mode.")
		var linked apiIface
		e.must(http.StatusOK, http.MethodPost, link, e.admin, url.Values{"op": {"link_subnet"}, "mode": {"STATIC"}, "subnet": {sn},
			"ip_address": {"198.51.100.10"}, "default_gateway": {"true"}}, &linked)
		if len(linked.Links) != 1 || linked.Links[0].Mode != "static" || linked.Links[0].IPAddress != "198.51.100.10" ||
			linked.Links[0].Subnet == nil || linked.Links[0].Subnet.CIDR != "198.51.100.0/24" {
			t.Fatalf("linked: %+v", linked)
		}
		// The machine shows its model.
		var mj struct {
			IPAddresses []string   `json:"ip_addresses"`
			Interfaces  []apiIface `json:"interface_set"`
			Boot        *apiIface  `json:"boot_interface"`
			Gateways    struct {
				IPv4 struct {
					GatewayIP *string `json:"gateway_ip"`
					LinkID    *int64  `json:"link_id"`
				} `json:"ipv4"`
			} `json:"default_gateways"`
		}
		e.must(http.StatusOK, http.MethodGet, "machines/"+m.SystemID+"/", e.admin, nil, &mj)
		if len(mj.Interfaces) != 4 || strings.Join(mj.IPAddresses, ",") != "198.51.100.10" || mj.Boot == nil || mj.Boot.Type != "physical" ||
			mj.Gateways.IPv4.GatewayIP == nil || *mj.Gateways.IPv4.GatewayIP != "198.51.100.1" || mj.Gateways.IPv4.LinkID == nil ||
			*mj.Gateways.IPv4.LinkID != linked.Links[0].ID {
			t.Fatalf("machine: %+v", mj)
		}
		var cleared struct {
			Gateways struct {
				IPv4 struct {
					LinkID *int64 `json:"link_id"`
				} `json:"ipv4"`
			} `json:"default_gateways"`
		}
		e.must(http.StatusOK, http.MethodPost, "machines/"+m.SystemID+"/", e.admin, url.Values{"op": {"clear_default_gateways"}}, nil)
		e.must(http.StatusOK, http.MethodGet, "machines/"+m.SystemID+"/", e.admin, nil, &cleared)
		if cleared.Gateways.IPv4.LinkID != nil {
			t.Fatalf("gateway still chosen: %+v", cleared)
		}

		// Another machine cannot take the address.
		o := e.addMachine("other", "52:54:00:16:00:09", nil)
		oi := e.ifaces(o.SystemID)["eth0"]
		obase := "nodes/" + o.SystemID + "/interfaces/" + id(oi) + "/"
		e.must(http.StatusOK, http.MethodPut, obase, e.admin, url.Values{"vlan": {itoa(f.vlan100.ID)}}, nil)
		e.wantFieldError(http.MethodPost, obase, e.admin, url.Values{"op": {"link_subnet"}, "mode": {"STATIC"}, "subnet": {sn}, "ip_address": {"198.51.100.10"}},
			"ip_address", "IP address is already in use.")

		// Tags, unlink, and refusal once deployed.
		var tagged apiIface
		e.must(http.StatusOK, http.MethodPost, link, e.admin, url.Values{"op": {"add_tag"}, "tag": {"uplink"}}, &tagged)
		if strings.Join(tagged.Tags, ",") != "uplink" {
			t.Fatalf("tags: %v", tagged.Tags)
		}
		if _, err := e.srv.Store.UpdateMachine(context.Background(), o.SystemID, func(mm *machineT) ([]eventT, error) {
			mm.Status = machine.Deployed
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		if code, b := e.call(http.MethodPost, "nodes/"+o.SystemID+"/interfaces/", e.admin, url.Values{"op": {"create_bond"}, "name": {"b"}, "parents": {id(oi)}}); code != http.StatusConflict ||
			!strings.Contains(string(b), "Cannot create bond interface because the machine is not New, Ready, Allocated, or Broken.") {
			t.Fatalf("deployed create_bond: %d %s", code, b)
		}
		var unlinked apiIface
		e.must(http.StatusOK, http.MethodPost, link, e.admin, url.Values{"op": {"unlink_subnet"}, "id": {itoa(linked.Links[0].ID)}}, &unlinked)
		if len(unlinked.Links) != 0 {
			t.Fatalf("unlinked: %+v", unlinked)
		}
		// Deleting the bond's VLAN, then the bond, leaves the NICs.
		e.must(http.StatusNoContent, http.MethodDelete, base+id(bond)+"/", e.admin, nil, nil)
		if got := e.ifaces(m.SystemID); len(got) != 2 {
			t.Fatalf("after delete: %+v", got)
		}
		if code, _ := e.call(http.MethodGet, base+"999999/", e.admin, nil); code != http.StatusNotFound {
			t.Fatalf("unknown interface: %d", code)
		}
	})
}
