package api_test

import (
	"net/http"
	"net/url"
	"testing"
)

// The field lists of MAAS's handlers (src/maasserver/api/*.py), each with
// resource_uri, which every MAAS object carries.
var (
	tagSchema    = schema{"name": str, "definition": str, "comment": str, "kernel_opts": strNull, "resource_uri": str}
	sshKeySchema = schema{"id": integer, "key": str, "keysource": strNull, "resource_uri": str}
	vlanSchema   = schema{
		"id": integer, "name": strNull, "vid": integer, "fabric": str, "fabric_id": integer, "mtu": integer,
		"primary_rack": strNull, "secondary_rack": strNull, "dhcp_on": boolean, "external_dhcp": strNull,
		"relay_vlan": objNull, "space": str, "resource_uri": str,
	}
	subnetSchema = schema{
		"id": integer, "name": str, "description": str, "vlan": object, "space": str, "cidr": str,
		"gateway_ip": strNull, "dns_servers": array, "rdns_mode": integer, "active_discovery": boolean,
		"allow_dns": boolean, "allow_proxy": boolean, "managed": boolean, "disabled_boot_architectures": array,
		"resource_uri": str,
	}
	iprangeSchema = schema{"id": integer, "type": str, "start_ip": str, "end_ip": str, "comment": str,
		"user": objNull, "subnet": object, "resource_uri": str}
)

func checkSubnet(t *testing.T, what string, sn map[string]any) {
	t.Helper()
	checkFields(t, what, sn, subnetSchema)
	if vlan, ok := sn["vlan"].(map[string]any); ok {
		checkFields(t, what+" vlan", vlan, vlanSchema)
	}
}

func TestZoneAndPoolFields(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		for _, c := range []struct{ coll, item string }{{"zones/", "zones/rack4/"}, {"resourcepools/", "resourcepool/"}} {
			made := decodeObject(t, e.answer(http.StatusOK, "POST", c.coll, e.admin, url.Values{"name": {"rack4"}, "description": {"row 2"}}))
			checkFields(t, "created "+c.coll, made, zoneSchema)
			item := c.item
			if c.coll == "resourcepools/" {
				item += kindValue(made["id"]) + "/"
			}
			if made["resource_uri"] != "/MAAS/api/2.0/"+item {
				t.Errorf("%s resource_uri %v, want /MAAS/api/2.0/%s", c.coll, made["resource_uri"], item)
			}
			checkFields(t, item, decodeObject(t, e.answer(http.StatusOK, "GET", item, e.user, nil)), zoneSchema)
			all := decodeList(t, e.answer(http.StatusOK, "GET", c.coll, e.user, nil))
			if len(all) != 2 {
				t.Fatalf("%s: %v", c.coll, all)
			}
			for _, g := range all {
				checkFields(t, c.coll, g, zoneSchema)
			}
		}
	})
}

func TestTagFields(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		made := decodeObject(t, e.answer(http.StatusOK, "POST", "tags/", e.admin, url.Values{"name": {"gpu"}, "comment": {"has one"}}))
		checkFields(t, "created tag", made, tagSchema)
		wantJSON(t, "created tag", made, "definition", `""`)
		wantJSON(t, "created tag", made, "resource_uri", `"/MAAS/api/2.0/tags/gpu/"`)
		checkFields(t, "tag", decodeObject(t, e.answer(http.StatusOK, "GET", "tags/gpu/", e.user, nil)), tagSchema)
		for _, tag := range decodeList(t, e.answer(http.StatusOK, "GET", "tags/", e.user, nil)) {
			checkFields(t, "listed tag", tag, tagSchema)
		}
	})
}

func TestSubnetAndRangeFields(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		sn := decodeObject(t, e.answer(http.StatusOK, "POST", "subnets/", e.admin, url.Values{"cidr": {"192.0.2.0/24"}, "dhcp_on": {"true"}}))
		checkSubnet(t, "created subnet", sn)
		// MAAS's values for a subnet made with only a CIDR.
		for f, j := range map[string]string{"gateway_ip": "null", "dns_servers": "[]", "space": `"undefined"`,
			"rdns_mode": "2", "allow_dns": "true", "allow_proxy": "true", "managed": "true", "active_discovery": "false",
			"disabled_boot_architectures": "[]", "description": `""`, "name": `"192.0.2.0/24"`} {
			wantJSON(t, "created subnet", sn, f, j)
		}
		wantJSON(t, "subnet vlan", sub(t, sn, "vlan"), "dhcp_on", "true")
		id := kindValue(sn["id"])
		gw := decodeObject(t, e.answer(http.StatusOK, "PUT", "subnets/"+id+"/", e.admin, url.Values{"gateway_ip": {"192.0.2.1"}, "dns_servers": {"192.0.2.53"}}))
		checkSubnet(t, "updated subnet", gw)
		wantJSON(t, "updated subnet", gw, "gateway_ip", `"192.0.2.1"`)
		wantJSON(t, "updated subnet", gw, "dns_servers", `["192.0.2.53"]`)
		checkSubnet(t, "subnet", decodeObject(t, e.answer(http.StatusOK, "GET", "subnets/"+id+"/", e.user, nil)))
		for _, s := range decodeList(t, e.answer(http.StatusOK, "GET", "subnets/", e.user, nil)) {
			checkSubnet(t, "listed subnet", s)
		}

		r := decodeObject(t, e.answer(http.StatusOK, "POST", "ipranges/", e.admin, url.Values{"type": {"dynamic"},
			"start_ip": {"192.0.2.100"}, "end_ip": {"192.0.2.199"}, "subnet": {id}, "comment": {"pool"}}))
		checkFields(t, "created range", r, iprangeSchema)
		checkSubnet(t, "created range's subnet", sub(t, r, "subnet"))
		// MAAS records who made a range.
		wantJSON(t, "created range", sub(t, r, "user"), "username", `"admin"`)
		ranges := decodeList(t, e.answer(http.StatusOK, "GET", "ipranges/", e.user, nil))
		if len(ranges) != 1 {
			t.Fatalf("ranges: %v", ranges)
		}
		checkFields(t, "listed range", ranges[0], iprangeSchema)
		listed := sub(t, ranges[0], "subnet")
		checkSubnet(t, "listed range's subnet", listed)
		wantJSON(t, "listed range's subnet", listed, "cidr", `"192.0.2.0/24"`)
		wantJSON(t, "listed range's subnet", listed, "gateway_ip", `"192.0.2.1"`)
	})
}

func TestSSHKeyFields(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		made := decodeObject(t, e.answer(http.StatusCreated, "POST", "account/prefs/sshkeys/", e.user, url.Values{"key": {testKey(7, "alice@desk")}}))
		checkFields(t, "created key", made, sshKeySchema)
		// MAAS answers a create with keysource null and reads of a key
		// that was not imported with "".
		wantJSON(t, "created key", made, "keysource", "null")
		id := kindValue(made["id"])
		read := decodeObject(t, e.answer(http.StatusOK, "GET", "account/prefs/sshkeys/"+id+"/", e.user, nil))
		checkFields(t, "key", read, sshKeySchema)
		wantJSON(t, "key", read, "keysource", `""`)
		wantJSON(t, "key", read, "resource_uri", `"/MAAS/api/2.0/account/prefs/sshkeys/`+id+`/"`)
		for _, k := range decodeList(t, e.answer(http.StatusOK, "GET", "sshkeys/", e.user, nil)) {
			checkFields(t, "listed key", k, sshKeySchema)
			wantJSON(t, "listed key", k, "keysource", `""`)
		}
	})
}
