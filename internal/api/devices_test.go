package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// deviceSchema is MAAS's DeviceHandler.fields (DISPLAYED_DEVICE_FIELDS
// in src/maasserver/api/devices.py) and resource_uri.
var deviceSchema = schema{
	"system_id": str, "hostname": str, "description": str, "domain": object, "fqdn": str,
	"owner": strNull, "owner_data": object, "parent": strNull, "tag_names": array, "address_ttl": intNull,
	"ip_addresses": array, "interface_set": array, "zone": object, "node_type": integer,
	"node_type_name": str, "workload_annotations": object, "resource_uri": str,
}

// checkDeviceFields checks a device against deviceSchema both ways: every
// field of MAAS's, of its kind, and none MAAS lacks.
func checkDeviceFields(t *testing.T, what string, obj map[string]any) {
	t.Helper()
	checkFields(t, what, obj, deviceSchema)
	for f := range obj {
		if _, ok := deviceSchema[f]; !ok {
			t.Errorf("%s: field %q is not one of MAAS's", what, f)
		}
	}
}

// userKey makes a non-admin user and returns its API key.
func (e *env) userKey(name string) string {
	e.t.Helper()
	ctx := context.Background()
	if _, err := e.srv.Store.EnsureUser(ctx, name, false); err != nil {
		e.t.Fatal(err)
	}
	tok, err := e.srv.Store.CreateToken(ctx, name)
	if err != nil {
		e.t.Fatal(err)
	}
	return tok.APIKey()
}

// allocatedTo makes a Ready machine and allocates it to the key's user.
func (e *env) allocatedTo(host, mac, key string) string {
	e.t.Helper()
	id := e.readyMachine(host, mac)
	e.must(http.StatusOK, "POST", "machines/?op=allocate", key, url.Values{"system_id": {id}}, nil)
	return id
}

type apiDevice struct {
	SystemID     string   `json:"system_id"`
	Hostname     string   `json:"hostname"`
	FQDN         string   `json:"fqdn"`
	Owner        *string  `json:"owner"`
	Parent       *string  `json:"parent"`
	IPAddresses  []string `json:"ip_addresses"`
	NodeType     int      `json:"node_type"`
	NodeTypeName string   `json:"node_type_name"`
	Description  string   `json:"description"`
	Zone         struct {
		Name string `json:"name"`
	} `json:"zone"`
	Domain struct {
		Name string `json:"name"`
	} `json:"domain"`
	Interfaces []struct {
		ID         int64  `json:"id"`
		Name       string `json:"name"`
		MACAddress string `json:"mac_address"`
		Links      []struct {
			ID        int64  `json:"id"`
			Mode      string `json:"mode"`
			IPAddress string `json:"ip_address"`
		} `json:"links"`
	} `json:"interface_set"`
	OwnerData map[string]string `json:"owner_data"`
}

func (e *env) deviceIDs(key string, filter url.Values) []string {
	e.t.Helper()
	var ds []apiDevice
	e.must(http.StatusOK, "GET", "devices/", key, filter, &ds)
	var out []string
	for _, d := range ds {
		out = append(out, d.Hostname)
	}
	return out
}

// TestDevicesAPI: create, read, list with MAAS's filters, update, the
// ops, delete; MAAS's field set; who sees and changes which device.
func TestDevicesAPI(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		bob := e.userKey("bob")
		parent := e.allocatedTo("host1", "52:54:00:00:e1:01", e.user)
		e.must(http.StatusOK, "POST", "zones/", e.admin, url.Values{"name": {"rack9"}}, nil)

		var c1 apiDevice
		made := decodeObject(t, e.answer(http.StatusOK, "POST", "devices/", e.user, url.Values{
			"hostname": {"lxd-1"}, "mac_addresses": {"52:54:00:00:e1:10", "52-54-00-00-E1-11"},
			"parent": {parent}, "description": {"a container"}, "zone": {"rack9"},
		}))
		checkDeviceFields(t, "created device", made)
		b, _ := json.Marshal(made)
		_ = json.Unmarshal(b, &c1)
		if c1.NodeType != 1 || c1.NodeTypeName != "Device" || c1.Parent == nil || *c1.Parent != parent ||
			c1.Owner == nil || *c1.Owner != "alice" || c1.FQDN != "lxd-1.maas" || c1.Zone.Name != "rack9" ||
			c1.Description != "a container" || len(c1.Interfaces) != 2 || c1.Interfaces[0].Name != "eth0" ||
			c1.Interfaces[1].MACAddress != "52:54:00:00:e1:11" || c1.Domain.Name != "maas" {
			t.Fatalf("created device: %s", b)
		}
		wantJSON(t, "created device", made, "resource_uri", `"/MAAS/api/2.0/devices/`+c1.SystemID+`/"`)
		for _, i := range made["interface_set"].([]any) {
			checkFields(t, "device interface", i.(map[string]any), interfaceSchema)
		}
		checkDeviceFields(t, "device", decodeObject(t, e.answer(http.StatusOK, "GET", "devices/"+c1.SystemID+"/", e.user, nil)))
		// nodes/ reads a device as a device.
		checkDeviceFields(t, "node", decodeObject(t, e.answer(http.StatusOK, "GET", "nodes/"+c1.SystemID+"/", e.user, nil)))
		for _, d := range decodeList(t, e.answer(http.StatusOK, "GET", "devices/", e.user, nil)) {
			checkDeviceFields(t, "listed device", d)
		}

		// bob's own device, without a parent; a hostname given is lower-cased.
		var c2 apiDevice
		e.must(http.StatusOK, "POST", "devices/", bob, url.Values{"hostname": {"Switch-2"}, "mac_addresses": {"52:54:00:00:e1:20"}}, &c2)
		if c2.Hostname != "switch-2" || c2.Parent != nil || c2.Zone.Name != "default" {
			t.Fatalf("bob's device: %+v", c2)
		}
		// A device made without a hostname gets one.
		var c3 apiDevice
		e.must(http.StatusOK, "POST", "devices/", e.admin, url.Values{"mac_addresses": {"52:54:00:00:e1:30"}}, &c3)
		if c3.Hostname == "" {
			t.Fatalf("no hostname generated: %+v", c3)
		}

		// Visibility: alice sees hers, bob his, the admin all; bob sees
		// alice's device once he owns its parent... he does not.
		if got := e.deviceIDs(e.user, nil); !slices.Equal(got, []string{"lxd-1"}) {
			t.Errorf("alice sees %v", got)
		}
		if got := e.deviceIDs(bob, nil); !slices.Equal(got, []string{"switch-2"}) {
			t.Errorf("bob sees %v", got)
		}
		if got := e.deviceIDs(e.admin, nil); len(got) != 3 {
			t.Errorf("admin sees %v", got)
		}
		e.answer(http.StatusNotFound, "GET", "devices/"+c1.SystemID+"/", bob, nil)
		e.answer(http.StatusNotFound, "PUT", "devices/"+c1.SystemID+"/", bob, url.Values{"description": {"mine"}})
		e.answer(http.StatusNotFound, "DELETE", "devices/"+c1.SystemID+"/", bob, nil)
		e.answer(http.StatusNotFound, "GET", "nodes/"+c1.SystemID+"/interfaces/", bob, nil)
		// A device is not a machine.
		e.answer(http.StatusNotFound, "GET", "machines/"+c1.SystemID+"/", e.admin, nil)
		e.answer(http.StatusNotFound, "DELETE", "machines/"+c1.SystemID+"/", e.admin, nil)
		for _, m := range decodeList(t, e.answer(http.StatusOK, "GET", "machines/", e.admin, nil)) {
			if m["system_id"] == c1.SystemID {
				t.Fatal("machines/ lists a device")
			}
		}

		// A device whose parent bob owns is bob's to see and change.
		bobs := e.allocatedTo("host2", "52:54:00:00:e1:02", bob)
		var c4 apiDevice
		e.must(http.StatusOK, "POST", "devices/", e.admin, url.Values{"hostname": {"lxd-2"}, "mac_addresses": {"52:54:00:00:e1:40"}, "parent": {bobs}}, &c4)
		if got := e.deviceIDs(bob, nil); !slices.Equal(got, []string{"switch-2", "lxd-2"}) {
			t.Errorf("bob sees %v", got)
		}
		e.must(http.StatusOK, "PUT", "devices/"+c4.SystemID+"/", bob, url.Values{"description": {"bob's now"}}, nil)
		// bob cannot name alice's machine as a parent.
		e.answer(http.StatusBadRequest, "PUT", "devices/"+c2.SystemID+"/", bob, url.Values{"parent": {parent}})

		// MAAS's filters.
		for _, c := range []struct {
			f    url.Values
			want []string
		}{
			{url.Values{"hostname": {"lxd-1"}}, []string{"lxd-1"}},
			{url.Values{"mac_address": {"52:54:00:00:e1:20"}}, []string{"switch-2"}},
			{url.Values{"id": {c1.SystemID, c2.SystemID}}, []string{"lxd-1", "switch-2"}},
			{url.Values{"zone": {"rack9"}}, []string{"lxd-1"}},
			{url.Values{"owner": {"bob"}}, []string{"switch-2"}},
			{url.Values{"domain": {"maas"}, "hostname": {"lxd-2"}}, []string{"lxd-2"}},
			{url.Values{"domain": {"elsewhere"}}, nil},
		} {
			if got := e.deviceIDs(e.admin, c.f); !slices.Equal(got, c.want) {
				t.Errorf("devices/ %v: %v, want %v", c.f, got, c.want)
			}
		}
		e.answer(http.StatusBadRequest, "GET", "devices/", e.admin, url.Values{"mac_address": {"not-a-mac"}})

		// Update: only what is given changes; parent="" clears it.
		var u apiDevice
		e.must(http.StatusOK, "PUT", "devices/"+c1.SystemID+"/", e.user, url.Values{"hostname": {"lxd-1b"}, "zone": {"default"}}, &u)
		if u.Hostname != "lxd-1b" || u.Description != "a container" || u.Parent == nil || u.Zone.Name != "default" {
			t.Fatalf("updated: %+v", u)
		}
		e.must(http.StatusOK, "PUT", "devices/"+c1.SystemID+"/", e.user, url.Values{"parent": {""}}, &u)
		if u.Parent != nil {
			t.Fatalf("parent not cleared: %+v", u)
		}

		// Workload annotations: the owner's, under both of MAAS's names.
		e.must(http.StatusOK, "POST", "devices/"+c1.SystemID+"/?op=set_owner_data", e.user, url.Values{"app": {"web"}, "tier": {"1"}}, &u)
		var u2 apiDevice
		e.must(http.StatusOK, "POST", "devices/"+c1.SystemID+"/?op=set_workload_annotations", e.user, url.Values{"tier": {""}}, &u2)
		if len(u2.OwnerData) != 1 || u2.OwnerData["app"] != "web" {
			t.Fatalf("owner data: %v", u2.OwnerData)
		}
		e.answer(http.StatusConflict, "POST", "devices/"+c1.SystemID+"/?op=set_owner_data", e.admin, url.Values{"x": {"y"}})

		// details answers BSON; restore_* is for administrators.
		e.answer(http.StatusOK, "GET", "devices/"+c1.SystemID+"/?op=details", e.user, nil)
		e.answer(http.StatusForbidden, "POST", "devices/"+c1.SystemID+"/?op=restore_networking_configuration", e.user, nil)
		var restored apiDevice
		e.must(http.StatusOK, "POST", "devices/"+c1.SystemID+"/?op=restore_default_configuration", e.admin, nil, &restored)
		// No subnet on the VLAN: the first interface asks DHCP, the other is up.
		if len(restored.Interfaces) != 2 || len(restored.Interfaces[0].Links) != 1 || restored.Interfaces[0].Links[0].Mode != "dhcp" ||
			len(restored.Interfaces[1].Links) != 1 || restored.Interfaces[1].Links[0].Mode != "link_up" {
			t.Fatalf("restored links: %+v", restored.Interfaces)
		}

		// Delete: gone, and its MACs free for another node.
		e.answer(http.StatusNoContent, "DELETE", "devices/"+c1.SystemID+"/", e.user, nil)
		e.answer(http.StatusNotFound, "GET", "devices/"+c1.SystemID+"/", e.admin, nil)
		e.must(http.StatusOK, "POST", "devices/", e.user, url.Values{"hostname": {"lxd-1"}, "mac_addresses": {"52:54:00:00:e1:10"}}, nil)
	})
}

// TestDeviceBadInput: every refusal is a 4xx in MAAS's words and stores
// nothing.
func TestDeviceBadInput(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		m := e.addMachine("taken", "52:54:00:00:e2:01", nil)
		var ok apiDevice
		e.must(http.StatusOK, "POST", "devices/", e.admin, url.Values{"hostname": {"dev1"}, "mac_addresses": {"52:54:00:00:e2:10"}}, &ok)
		long := strings.Repeat("x", 300)
		for _, c := range []struct {
			name  string
			form  url.Values
			field string
			msg   string
		}{
			{"no MAC", url.Values{"hostname": {"d"}}, "mac_addresses", "This field is required."},
			{"bad MAC", url.Values{"hostname": {"d"}, "mac_addresses": {"zz:54:00"}}, "mac_addresses", "'zz:54:00' is not a valid MAC address."},
			{"bad among many", url.Values{"hostname": {"d"}, "mac_addresses": {"52:54:00:00:e2:20", "nope"}}, "mac_addresses", "One or more MAC addresses is invalid."},
			{"machine's MAC", url.Values{"hostname": {"d"}, "mac_addresses": {"52:54:00:00:e2:01"}}, "mac_addresses", "MAC address 52:54:00:00:e2:01 already in use on taken."},
			{"device's MAC", url.Values{"hostname": {"d"}, "mac_addresses": {"52:54:00:00:e2:10"}}, "mac_addresses", "MAC address 52:54:00:00:e2:10 already in use on dev1."},
			{"MAC twice", url.Values{"hostname": {"d"}, "mac_addresses": {"52:54:00:00:e2:30", "52:54:00:00:e2:30"}}, "mac_addresses", "MAC address 52:54:00:00:e2:30 is listed more than once."},
			{"machine's hostname", url.Values{"hostname": {"taken"}, "mac_addresses": {"52:54:00:00:e2:40"}}, "hostname", "Node with this Hostname already exists."},
			{"device's hostname", url.Values{"hostname": {"DEV1"}, "mac_addresses": {"52:54:00:00:e2:40"}}, "hostname", "Node with this Hostname already exists."},
			{"bad hostname", url.Values{"hostname": {"-bad_"}, "mac_addresses": {"52:54:00:00:e2:40"}}, "hostname", ""},
			{"hostile hostname", url.Values{"hostname": {"a'; DROP TABLE machines;--"}, "mac_addresses": {"52:54:00:00:e2:40"}}, "hostname", ""},
			{"dotted hostname", url.Values{"hostname": {"a.b"}, "mac_addresses": {"52:54:00:00:e2:40"}}, "hostname", ""},
			{"unknown parent", url.Values{"hostname": {"d"}, "mac_addresses": {"52:54:00:00:e2:40"}, "parent": {"nosuch"}}, "parent", "Select a valid choice. That choice is not one of the available choices."},
			{"device as parent", url.Values{"hostname": {"d"}, "mac_addresses": {"52:54:00:00:e2:40"}, "parent": {ok.SystemID}}, "parent", ""},
			{"unknown zone", url.Values{"hostname": {"d"}, "mac_addresses": {"52:54:00:00:e2:40"}, "zone": {"nowhere"}}, "zone", ""},
			{"unknown domain", url.Values{"hostname": {"d"}, "mac_addresses": {"52:54:00:00:e2:40"}, "domain": {"nowhere"}}, "domain", "Unable to find domain nowhere"},
			{"long description", url.Values{"hostname": {"d"}, "mac_addresses": {"52:54:00:00:e2:40"}, "description": {strings.Repeat(long, 4)}}, "description", ""},
			{"long hostname", url.Values{"hostname": {long}, "mac_addresses": {"52:54:00:00:e2:40"}}, "hostname", ""},
		} {
			fe := map[string][]string{}
			if err := json.Unmarshal(e.answer(http.StatusBadRequest, "POST", "devices/", e.admin, c.form), &fe); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if len(fe[c.field]) == 0 || (c.msg != "" && !slices.Contains(fe[c.field], c.msg)) {
				t.Errorf("%s: %v, want %s: %q", c.name, fe, c.field, c.msg)
			}
		}
		if got := e.deviceIDs(e.admin, nil); !slices.Equal(got, []string{"dev1"}) {
			t.Fatalf("refused creations stored devices: %v", got)
		}
		// The same rules on update, and a refused update changes nothing.
		e.answer(http.StatusBadRequest, "PUT", "devices/"+ok.SystemID+"/", e.admin, url.Values{"hostname": {"taken"}})
		e.answer(http.StatusBadRequest, "PUT", "devices/"+ok.SystemID+"/", e.admin, url.Values{"description": {"fine"}, "zone": {"nowhere"}})
		var now apiDevice
		e.must(http.StatusOK, "GET", "devices/"+ok.SystemID+"/", e.admin, nil, &now)
		if now.Hostname != "dev1" || now.Description != "" {
			t.Fatalf("refused updates changed the device: %+v", now)
		}
		// A device's MAC cannot go onto a machine either.
		e.answer(http.StatusBadRequest, "POST", "nodes/"+m.SystemID+"/interfaces/?op=create_physical", e.admin, url.Values{"mac_address": {"52:54:00:00:e2:10"}})
		code, _ := e.call("POST", "machines/", e.admin, url.Values{"hostname": {"m2"}, "mac_addresses": {"52:54:00:00:e2:10"}, "architecture": {"amd64/generic"}})
		if code/100 != 4 {
			t.Errorf("a machine took a device's MAC: %d", code)
		}
	})
}

// TestDeviceInterfaces: a device's interfaces through nodes/{id}/interfaces/,
// by its owner, at any time: AUTO is allocated at once from the same
// allocator as machines', STATIC and DHCP links, unlink, delete; the
// addresses show in ipaddresses/ and the subnet's statistics, and the
// device's deletion frees them.
func TestDeviceInterfaces(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		var sn struct {
			ID int64 `json:"id"`
		}
		e.must(http.StatusOK, "POST", "subnets/", e.admin, url.Values{"cidr": {"192.0.2.0/24"}}, &sn)
		e.must(http.StatusOK, "POST", "ipranges/", e.admin, url.Values{"subnet": {fmt.Sprint(sn.ID)}, "type": {"reserved"},
			"start_ip": {"192.0.2.1"}, "end_ip": {"192.0.2.9"}}, nil)
		stats := func() int {
			var st struct {
				Unavailable int `json:"num_unavailable"`
			}
			e.must(http.StatusOK, "GET", fmt.Sprintf("subnets/%d/", sn.ID), e.admin, url.Values{"op": {"statistics"}}, &st)
			return st.Unavailable
		}
		before := stats()
		var d apiDevice
		e.must(http.StatusOK, "POST", "devices/", e.user, url.Values{"hostname": {"ct1"}, "mac_addresses": {"52:54:00:00:e3:01"}}, &d)
		base := "nodes/" + d.SystemID + "/interfaces/"
		var eth1 struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		}
		e.must(http.StatusOK, "POST", base+"?op=create_physical", e.user, url.Values{"mac_address": {"52:54:00:00:e3:02"}}, &eth1)
		if eth1.Name != "eth1" {
			t.Fatalf("new interface %+v", eth1)
		}
		eth0 := fmt.Sprint(d.Interfaces[0].ID)
		type link struct {
			ID        int64  `json:"id"`
			Mode      string `json:"mode"`
			IPAddress string `json:"ip_address"`
		}
		var i0 struct {
			Links []link `json:"links"`
		}
		e.must(http.StatusOK, "POST", base+eth0+"/?op=link_subnet", e.user, url.Values{"mode": {"AUTO"}, "subnet": {fmt.Sprint(sn.ID)}}, &i0)
		if len(i0.Links) != 1 || i0.Links[0].IPAddress != "192.0.2.10" {
			t.Fatalf("AUTO link on a device not allocated at once: %+v", i0)
		}
		e.must(http.StatusOK, "POST", base+fmt.Sprint(eth1.ID)+"/?op=link_subnet", e.user, url.Values{"mode": {"STATIC"}, "subnet": {fmt.Sprint(sn.ID)}, "ip_address": {"192.0.2.77"}}, nil)
		// The address another node holds is refused.
		e.answer(http.StatusBadRequest, "POST", base+fmt.Sprint(eth1.ID)+"/?op=link_subnet", e.user, url.Values{"mode": {"STATIC"}, "subnet": {fmt.Sprint(sn.ID)}, "ip_address": {"192.0.2.10"}})
		var dhcp struct {
			Links []link `json:"links"`
		}
		e.must(http.StatusOK, "POST", base+fmt.Sprint(eth1.ID)+"/?op=link_subnet", e.user, url.Values{"mode": {"DHCP"}, "subnet": {fmt.Sprint(sn.ID)}}, &dhcp)
		if len(dhcp.Links) != 2 {
			t.Fatalf("eth1 links %+v", dhcp.Links)
		}
		// Others may not touch them.
		bob := e.userKey("bob")
		e.answer(http.StatusNotFound, "POST", base+eth0+"/?op=unlink_subnet", bob, url.Values{"id": {fmt.Sprint(i0.Links[0].ID)}})

		var got apiDevice
		e.must(http.StatusOK, "GET", "devices/"+d.SystemID+"/", e.user, nil, &got)
		if !slices.Equal(got.IPAddresses, []string{"192.0.2.10", "192.0.2.77"}) {
			t.Fatalf("device ip_addresses %v", got.IPAddresses)
		}
		listed := func() []string {
			var as []struct {
				IP string `json:"ip"`
			}
			e.must(http.StatusOK, "GET", "ipaddresses/", e.admin, url.Values{"all": {"true"}}, &as)
			var out []string
			for _, a := range as {
				out = append(out, a.IP)
			}
			slices.Sort(out)
			return out
		}
		if l := listed(); !slices.Contains(l, "192.0.2.10") || !slices.Contains(l, "192.0.2.77") {
			t.Fatalf("ipaddresses/ %v", l)
		}
		withDevice := stats()
		if withDevice != before+2 {
			t.Fatalf("num_unavailable %d with the device's two addresses, %d before", withDevice, before)
		}

		// Unlink frees the AUTO address; delete of the interface its links.
		e.must(http.StatusOK, "POST", base+eth0+"/?op=unlink_subnet", e.user, url.Values{"id": {fmt.Sprint(i0.Links[0].ID)}}, nil)
		if n := stats(); n != withDevice-1 {
			t.Fatalf("unlink: num_unavailable %d, was %d", n, withDevice)
		}
		e.answer(http.StatusNoContent, "DELETE", base+fmt.Sprint(eth1.ID)+"/", e.user, nil)
		if n := stats(); n != withDevice-2 {
			t.Fatalf("interface delete: num_unavailable %d, was %d", n, withDevice)
		}
		// A new AUTO link takes the lowest free address again; deleting the
		// device frees it.
		e.must(http.StatusOK, "POST", base+eth0+"/?op=link_subnet", e.user, url.Values{"mode": {"AUTO"}, "subnet": {fmt.Sprint(sn.ID)}}, &i0)
		if i0.Links[0].IPAddress != "192.0.2.10" {
			t.Fatalf("relinked %+v", i0)
		}
		// Restoring the network links the first interface AUTO on its VLAN's
		// subnet, allocated at once.
		var restored apiDevice
		e.must(http.StatusOK, "POST", "devices/"+d.SystemID+"/?op=restore_networking_configuration", e.admin, nil, &restored)
		if len(restored.Interfaces) != 1 || len(restored.Interfaces[0].Links) != 1 || restored.Interfaces[0].Links[0].Mode != "auto" ||
			restored.Interfaces[0].Links[0].IPAddress != "192.0.2.10" {
			t.Fatalf("restored: %+v", restored.Interfaces)
		}
		e.answer(http.StatusNoContent, "DELETE", "devices/"+d.SystemID+"/", e.user, nil)
		if l := listed(); slices.Contains(l, "192.0.2.10") {
			t.Fatalf("deleted device's address still listed: %v", l)
		}
		if n := stats(); n != withDevice-2 {
			t.Fatalf("device delete: num_unavailable %d, was %d", n, withDevice)
		}
	})
}

// TestDevicesGoWithParent: a machine's release deletes its devices and
// frees their addresses, as MAAS does; so does the machine's deletion.
func TestDevicesGoWithParent(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		var sn struct {
			ID int64 `json:"id"`
		}
		e.must(http.StatusOK, "POST", "subnets/", e.admin, url.Values{"cidr": {"198.51.100.0/24"}}, &sn)
		parent := e.allocatedTo("host1", "52:54:00:00:e4:01", e.user)
		mk := func(host, mac, parent string) apiDevice {
			var d apiDevice
			f := url.Values{"hostname": {host}, "mac_addresses": {mac}}
			if parent != "" {
				f.Set("parent", parent)
			}
			e.must(http.StatusOK, "POST", "devices/", e.user, f, &d)
			e.must(http.StatusOK, "POST", fmt.Sprintf("nodes/%s/interfaces/%d/?op=link_subnet", d.SystemID, d.Interfaces[0].ID), e.user,
				url.Values{"mode": {"AUTO"}, "subnet": {fmt.Sprint(sn.ID)}}, nil)
			return d
		}
		mk("child1", "52:54:00:00:e4:10", parent)
		mk("child2", "52:54:00:00:e4:11", parent)
		mk("loner", "52:54:00:00:e4:12", "")
		e.must(http.StatusOK, "POST", "machines/"+parent+"/?op=release", e.user, nil, nil)
		if got := e.deviceIDs(e.admin, nil); !slices.Equal(got, []string{"loner"}) {
			t.Fatalf("after release: %v", got)
		}
		var as []struct {
			IP string `json:"ip"`
		}
		e.must(http.StatusOK, "GET", "ipaddresses/", e.admin, url.Values{"all": {"true"}}, &as)
		if len(as) != 1 {
			t.Fatalf("addresses after release: %+v", as)
		}
		// The MACs are free again.
		other := e.addMachine("host2", "52:54:00:00:e4:02", nil)
		mk("child3", "52:54:00:00:e4:10", other.SystemID)
		e.answer(http.StatusNoContent, "DELETE", "machines/"+other.SystemID+"/", e.admin, nil)
		if got := e.deviceIDs(e.admin, nil); !slices.Equal(got, []string{"loner"}) {
			t.Fatalf("after delete: %v", got)
		}
	})
}
