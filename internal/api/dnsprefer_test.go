package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"
)

// TestDNSBondOverStaleSighting: a machine whose boot NIC a bond took
// over, with a STATIC address on the bond, answers with that address, as
// MAAS does; the rack's old sighting of the NIC (its DHCP lease from
// before the bond) is in no answer.
func TestDNSBondOverStaleSighting(t *testing.T) {
	needDig(t)
	eachDB(t, func(t *testing.T, e *env) {
		ns := e.srv.Rack.DNS.String()
		sn := e.newSubnet("192.0.2.0/24")
		macs := []string{"52:54:00:00:d8:01", "52:54:00:00:d8:02"}
		m := e.addMachine("node8", macs[0], url.Values{"mac_addresses": macs})
		base := "nodes/" + m.SystemID + "/interfaces/"
		is := e.ifaces(m.SystemID)
		for _, i := range is {
			e.must(http.StatusOK, http.MethodPut, base+id(i)+"/", e.admin, url.Values{"vlan": {itoa(sn.VLAN.ID)}}, nil)
		}
		var bond apiIface
		e.must(http.StatusOK, http.MethodPost, base, e.admin, url.Values{"op": {"create_bond"}, "name": {"bond0"},
			"parents": {id(is["eth0"]), id(is["eth1"])}, "bond_mode": {"active-backup"}}, &bond)
		e.must(http.StatusOK, http.MethodPost, base+id(bond)+"/", e.admin, url.Values{"op": {"link_subnet"}, "mode": {"STATIC"},
			"subnet": {itoa(sn.ID)}, "ip_address": {"192.0.2.60"}}, nil)
		e.deployed(m.SystemID)
		evs, _ := json.Marshal([]map[string]any{{"mac": macs[0], "ip": "192.0.2.99", "kind": "dhcp", "detail": "ack", "at": time.Now()}})
		e.must(200, "POST", "rack/", e.admin, url.Values{"op": {"boot_events"}, "events": {string(evs)}}, nil)
		within(t, "node8 answers with the bond's address", 5*time.Second, func() bool {
			_, l := dig(t, ns, "node8.maas", "A", "+norec")
			return slices.Equal(l, []string{"node8.maas. 30 IN A 192.0.2.60"})
		})
		if st, _ := dig(t, ns, "99.2.0.192.in-addr.arpa", "PTR", "+norec"); st != "NXDOMAIN" {
			t.Fatalf("the stale sighting has a PTR: %s", st)
		}
		if st, _ := dig(t, ns, "eth0.node8.maas", "A", "+norec"); st != "NXDOMAIN" {
			t.Fatalf("the stale sighting names eth0: %s", st)
		}
	}, withDNS)
}

type subnetIDs struct {
	ID   int64 `json:"id"`
	VLAN struct {
		ID int64 `json:"id"`
	} `json:"vlan"`
}

// newSubnet creates a subnet, answering its id and its VLAN's.
func (e *env) newSubnet(cidr string) subnetIDs {
	e.t.Helper()
	var sn subnetIDs
	e.must(200, "POST", "subnets/", e.admin, url.Values{"cidr": {cidr}}, &sn)
	return sn
}
