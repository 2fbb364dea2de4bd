package api_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// listed is what the machines list shows of one machine's network.
type listed struct {
	SystemID    string     `json:"system_id"`
	IPAddresses []string   `json:"ip_addresses"`
	Interfaces  []apiIface `json:"interface_set"`
	TagNames    []string   `json:"tag_names"`
	Gateways    struct {
		IPv4 struct {
			LinkID *int64 `json:"link_id"`
		} `json:"ipv4"`
	} `json:"default_gateways"`
}

// listedAs reads the machine from the machines list (with each of the
// list's filters that select it), failing unless every answer agrees
// with the machine's own GET.
func (e *env) listedAs(systemID string) listed {
	e.t.Helper()
	var one listed
	e.must(http.StatusOK, http.MethodGet, "machines/"+systemID+"/", e.admin, nil, &one)
	var got listed
	for _, q := range []string{"machines/", "machines/?id=" + systemID} {
		var all []listed
		e.must(http.StatusOK, http.MethodGet, q, e.admin, nil, &all)
		k := slices.IndexFunc(all, func(l listed) bool { return l.SystemID == systemID })
		if k < 0 {
			e.t.Fatalf("%s: %s not listed", q, systemID)
		}
		got = all[k]
		if ifaceSummary(got) != ifaceSummary(one) {
			e.t.Fatalf("%s shows %s\nthe machine shows %s", q, ifaceSummary(got), ifaceSummary(one))
		}
	}
	return got
}

// ifaceSummary is what a test compares of a machine's network as shown.
func ifaceSummary(l listed) string {
	var b strings.Builder
	for _, i := range l.Interfaces {
		b.WriteString(i.Name + "/" + i.Type + "[" + strings.Join(i.Parents, ",") + "]{" + strings.Join(i.Tags, ",") + "}")
		if i.VLAN != nil {
			b.WriteString("@" + itoa(i.VLAN.ID))
		}
		for _, k := range i.Links {
			b.WriteString(" " + k.Mode + ":" + k.IPAddress)
			if k.Subnet != nil {
				b.WriteString("(" + k.Subnet.CIDR + ")")
			}
		}
		b.WriteString("; ")
	}
	b.WriteString("ips=" + strings.Join(l.IPAddresses, ",") + " tags=" + strings.Join(l.TagNames, ","))
	if l.Gateways.IPv4.LinkID != nil {
		b.WriteString(" gw4=" + itoa(*l.Gateways.IPv4.LinkID))
	}
	return b.String()
}

// TestMachineListFresh lists a machine between writes to its interfaces,
// links, gateway choice and tags, and to the site's network, and checks
// that the list (served from its render cache) shows each write at once,
// as the machine's own GET does.
func TestMachineListFresh(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		f := newNetFixture(t, e)
		m := e.addMachine("fresh", "52:54:00:30:00:01", url.Values{"mac_addresses": {"52:54:00:30:00:01", "52:54:00:30:00:02"}})
		base := "nodes/" + m.SystemID + "/interfaces/"
		e.listedAs(m.SystemID) // fills the cache
		is := e.ifaces(m.SystemID)
		eth0, eth1 := is["eth0"], is["eth1"]

		steps := []struct {
			what  string
			write func()
			shows string
		}{
			{"vlan", func() {
				e.must(http.StatusOK, http.MethodPut, base+id(eth1)+"/", e.admin, url.Values{"vlan": {itoa(f.vlan100.ID)}}, nil)
			}, "eth1/physical[]{}@" + itoa(f.vlan100.ID)},
			{"link_subnet", func() {
				e.must(http.StatusOK, http.MethodPost, base+id(eth1)+"/", e.admin, url.Values{"op": {"link_subnet"}, "mode": {"STATIC"},
					"subnet": {itoa(f.subnet.ID)}, "ip_address": {"198.51.100.31"}}, nil)
			}, "static:198.51.100.31(198.51.100.0/24)"},
			{"set_default_gateway", func() {
				e.must(http.StatusOK, http.MethodPost, base+id(eth1)+"/", e.admin, url.Values{"op": {"set_default_gateway"}}, nil)
			}, " gw4="},
			{"add_tag", func() {
				e.must(http.StatusOK, http.MethodPost, base+id(eth0)+"/", e.admin, url.Values{"op": {"add_tag"}, "tag": {"sriov"}}, nil)
			}, "eth0/physical[]{sriov}"},
			{"create_physical", func() {
				e.must(http.StatusOK, http.MethodPost, base, e.admin, url.Values{"op": {"create_physical"}, "mac_address": {"52:54:00:30:00:03"},
					"name": {"eth9"}, "vlan": {itoa(f.untagged.ID)}}, nil)
			}, "eth9/physical"},
			{"machine tag", func() {
				e.must(http.StatusOK, http.MethodPost, "tags/", e.admin, url.Values{"name": {"listed"}}, nil)
				e.must(http.StatusOK, http.MethodPost, "tags/listed/?op=update_nodes", e.admin, url.Values{"add": {m.SystemID}}, nil)
			}, "tags=listed"},
			{"subnet renamed elsewhere", func() {
				sn := f.subnet
				sn.CIDR = "198.51.100.0/25"
				if _, err := e.srv.Store.UpdateSubnet(ctx, sn); err != nil {
					t.Fatal(err)
				}
			}, "(198.51.100.0/25)"},
			{"unlink_subnet", func() {
				links := e.ifaces(m.SystemID)["eth1"].Links
				e.must(http.StatusOK, http.MethodPost, base+id(eth1)+"/", e.admin, url.Values{"op": {"unlink_subnet"}, "id": {itoa(links[0].ID)}}, nil)
			}, "eth1/physical[]{}@" + itoa(f.vlan100.ID) + "; "},
			{"delete", func() {
				e.must(http.StatusNoContent, http.MethodDelete, base+id(eth0)+"/", e.admin, nil, nil)
			}, "ips= "},
		}
		for _, s := range steps {
			s.write()
			got := ifaceSummary(e.listedAs(m.SystemID))
			if !strings.Contains(got, s.shows) {
				t.Fatalf("after %s the list shows %s, want %q in it", s.what, got, s.shows)
			}
		}
		if got := ifaceSummary(e.listedAs(m.SystemID)); strings.Contains(got, "eth0/") || strings.Contains(got, "gw4=") {
			t.Fatalf("after deleting eth0 and unlinking eth1: %s", got)
		}
	})
}
