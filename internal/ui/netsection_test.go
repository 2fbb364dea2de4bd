package ui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"testing"
)

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
